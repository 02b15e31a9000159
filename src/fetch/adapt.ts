import { type AdapterOptions, logError } from "../http/adapter-options";
import type { Handler, HttpRequest } from "../http/message";
import { internalErrorResponse, isHttpProblem } from "../http/problem";
import { readRequest } from "./request";
import { sendResponse } from "./response";

/**
 * Adapts a {@link Handler} to the Fetch shape `(Request) => Promise<Response>` used by Deno, Bun,
 * Cloudflare Workers and service workers. A thrown {@link HttpProblem} is sent as its problem document;
 * any other error goes to `onError` and the client gets a bare 500 problem.
 * @example export default { fetch: adapt(handler) }
 */
export function adapt(handler: Handler, options: AdapterOptions = {}): (request: Request) => Promise<Response> {
  const onError = options.onError ?? logError;
  return async (native) => {
    let request: HttpRequest | undefined;
    try {
      const read = await readRequest(native, options);
      if (!read.ok) return sendResponse(read.problem.toResponse(), native.method);
      request = read.request;
      return sendResponse(await handler(read.request), native.method);
    } catch (error) {
      if (isHttpProblem(error)) return sendResponse(error.toResponse(), native.method);
      onError(error, request);
      return sendResponse(internalErrorResponse(), native.method);
    }
  };
}
