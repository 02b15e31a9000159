import { adapt } from "../fetch/index";
import type { Handler } from "../http/message";

/** Where the laws send their requests: anything that answers a Fetch `Request`. */
export interface Target {
  /** Absolute base URL that relative paths are resolved against. */
  readonly baseUrl: string;
  send(request: Request): Promise<Response>;
}

/**
 * A target for a running server.
 * @example const target = fromBaseUrl("http://127.0.0.1:3000");
 */
export function fromBaseUrl(baseUrl: string, fetchImpl: typeof fetch = fetch): Target {
  return { baseUrl: baseUrl.replace(/\/$/, ""), send: (request) => fetchImpl(request) };
}

/** An in-process target: the handler is served through the Fetch adapter, no socket involved. */
export function fromHandler(handler: Handler): Target {
  const serve = adapt(handler, { onError: () => undefined });
  return { baseUrl: "http://in-process.test", send: serve };
}

/** An in-process target for anything already shaped `(Request) => Promise<Response>` (Hono, itty, workers). */
export function fromFetchHandler(serve: (request: Request) => Promise<Response>): Target {
  return { baseUrl: "http://in-process.test", send: serve };
}
