import { nonNegativeInteger } from "../options/number-option";
import type { withAfterSend } from "./after-send";
import type { HttpRequest } from "./message";
import { HttpProblem, type HttpProblemCode } from "./problem";

/** Options both adapters take, with the same meaning. */
export interface AdapterOptions {
  /**
   * Largest request body read into memory, in bytes; a larger one gets a 413 problem
   * and the rest is not read.
   * @default 1_048_576 (1 MiB)
   */
  bodyLimit?: number;
  /**
   * Called with any error a handler throws that is not an {@link HttpProblem}; the client
   * gets a 500 problem without details either way.
   * @default logs the error to stderr
   */
  onError?: (error: unknown, request: HttpRequest | undefined) => void;
  /**
   * Schedules a response's after-send callback ({@link withAfterSend}) once the response has been
   * handed over. node:http runs it on the response's `'finish'` event and ignores this option; a
   * Fetch runtime does not say when it has written a response, so pass a later hook if it has one,
   * e.g. `(run) => setTimeout(run, 0)` on Deno or Bun, or `ctx.waitUntil`-based scheduling on Workers.
   * @default Fetch: a microtask queued after the caller's own reaction to the returned promise
   */
  afterSend?: (callback: () => void) => void;
}

/** The default body limit: 1 MiB. */
export const DEFAULT_BODY_LIMIT = 1_048_576;

/**
 * The body limit `options` set, or {@link DEFAULT_BODY_LIMIT}; a `TypeError` naming `owner` when it is not a
 * non-negative integer. Compared with `NaN` (an unset environment variable through `Number`), no body is ever over the
 * limit: refused here rather than read without one.
 */
export function bodyLimitOf(options: Pick<AdapterOptions, "bodyLimit">, owner: string): number {
  return nonNegativeInteger(owner, "bodyLimit", options.bodyLimit ?? DEFAULT_BODY_LIMIT, "bytes");
}

/** The outcome of turning a runtime's request into an {@link HttpRequest}. */
export type ReadRequestResult =
  | { ok: true; request: HttpRequest }
  | { ok: false; problem: HttpProblem<HttpProblemCode> };

/** The 413 problem (RFC 9110 §15.5.14). */
export function bodyTooLarge(limit: number): HttpProblem<HttpProblemCode> {
  return new HttpProblem({
    status: 413,
    code: "body_too_large",
    detail: `The request body exceeds the limit of ${limit} bytes.`,
    extensions: { limit },
    headers: { connection: "close" },
  });
}

/**
 * The 500 problem for a request whose body was read before the adapter (a framework's body parser, a middleware, a
 * hook): its exact bytes are gone, so the request cannot be served as sent. A misconfiguration, not the client's
 * fault: its own code, so logs tell it from a handler's crash (`internal_error`), and a detail that names nothing
 * internal (RFC 9457 §5). Every adapter answers it the same; only `cause`, which the adapter reports to `onError` and
 * never serialises, differs: it names the adapter and what to change.
 * @param cause the error for `onError`, naming the adapter, the request and the fix.
 * @example bodyConsumed(new TypeError("rest-webhooks/node: the body of POST /hook was already read ..."))
 * @see docs/adapters.md, "What the adapters guarantee"
 */
export function bodyConsumed(cause: Error): HttpProblem<HttpProblemCode> {
  return new HttpProblem({
    status: 500,
    code: "body_consumed",
    detail: "The server could not complete the request: the request body was no longer available to it.",
    cause,
  });
}

/**
 * The 400 problem for a request body the adapter could not read to its end: the stream failed, or the client went
 * away before it ended. Every adapter answers it the same; `cause` (for `onError`, never serialised) says which.
 * @param cause what ended the reading.
 */
export function bodyReadFailed(cause: unknown): HttpProblem<HttpProblemCode> {
  return new HttpProblem({
    status: 400,
    code: "body_read_failed",
    detail: "The request body could not be read.",
    cause,
  });
}

/** The 400 problem for a request target the adapter cannot parse. */
export function badRequestTarget(detail: string): HttpProblem<HttpProblemCode> {
  return new HttpProblem({ status: 400, code: "bad_request_target", detail });
}

/** Parses a Content-Length value (RFC 9110 §8.6: 1*DIGIT); `undefined` when absent, `NaN` when malformed. */
export function contentLength(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  return /^\d+$/.test(value) ? Number(value) : Number.NaN;
}

/** Default `onError`: adapters are the I/O edge, so logging here is allowed. */
export function logError(error: unknown): void {
  console.error("rest-webhooks: unhandled error in handler", error);
}

/** Splits a request target (origin-form, RFC 9112 §3.2.1) into path and query string. */
export function splitTarget(target: string): { path: string; search: string } {
  const q = target.indexOf("?");
  if (q === -1) return { path: target, search: "" };
  return { path: target.slice(0, q), search: target.slice(q + 1) };
}
