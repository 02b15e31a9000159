import type { Handler, HttpRequest, HttpResponse } from "../../../src/http/message";
import { isHttpProblem } from "../../../src/http/problem";

/**
 * POSTs a registration of `url` (every event) to the endpoint API as the bearer of `sk_test_key`, with a thrown problem
 * answered as the adapters answer it.
 */
export async function registerEndpoint(handler: Handler, url: string): Promise<HttpResponse> {
  const request: HttpRequest = {
    method: "POST",
    path: "/v1/webhook_endpoints",
    search: "",
    query: {},
    headers: { authorization: "Bearer sk_test_key", "content-type": "application/json" },
    body: new TextEncoder().encode(JSON.stringify({ url, enabled_events: ["*"] })),
  };
  return Promise.resolve(handler(request)).catch((error: unknown) => {
    if (isHttpProblem(error)) return error.toResponse();
    throw error;
  });
}
