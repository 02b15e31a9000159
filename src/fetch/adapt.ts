import { type AdapterOptions, bodyLimitOf } from "../http/adapter-options";
import { takeAfterSend } from "../http/after-send";
import { guardedReporter } from "../http/guarded-report";
import type { Handler, HttpRequest } from "../http/message";
import { internalErrorResponse, isHttpProblem } from "../http/problem";
import { readRequest } from "./request";
import { sendResponse } from "./response";

/**
 * Adapts a {@link Handler} to the Fetch shape `(Request) => Promise<Response>` used by Deno, Bun,
 * Cloudflare Workers and service workers. A thrown {@link HttpProblem} is sent as its problem document;
 * any other error goes to `onError` and the client gets a bare 500 problem. A response's after-send
 * callback ({@link withAfterSend}) runs once the `Response` has been returned, through `afterSend`.
 * @example export default { fetch: adapt(handler) }
 */
export function adapt(handler: Handler, options: AdapterOptions = {}): (request: Request) => Promise<Response> {
  bodyLimitOf(options, "adapt"); // refused now, not on the first request
  const onError = guardedReporter(options);
  const schedule = options.afterSend ?? queueMicrotask;
  const ignore = () => {};
  return (native) => {
    let request: HttpRequest | undefined;
    let callback: (() => void) | undefined;
    const pending = (async () => {
      try {
        const read = await readRequest(native, options);
        if (!read.ok) {
          // A 500 here is the app's mistake (a body read before the adapter): its cause says which.
          if (read.problem.status >= 500) onError(read.problem.cause ?? read.problem, undefined);
          return sendResponse(read.problem.toResponse(), native.method);
        }
        request = read.request;
        const response = await handler(read.request);
        callback = takeAfterSend(response);
        return sendResponse(response, native.method);
      } catch (error) {
        callback = undefined;
        let reported = error;
        if (isHttpProblem(error)) {
          try {
            return sendResponse(error.toResponse(), native.method);
          } catch (refused) {
            // A header of the problem's that the runtime refuses: the handler's mistake, answered as any other.
            reported = refused;
          }
        }
        onError(reported, request);
        return sendResponse(internalErrorResponse(), native.method);
      }
    })();
    // Registered before the caller can await `pending`, this reaction runs first; the microtask it
    // queues runs after the caller's own reaction, i.e. once the caller holds the Response.
    pending.then(() => {
      const run = callback;
      if (run === undefined) return;
      schedule(() => {
        try {
          run();
        } catch (error) {
          onError(error, request);
        }
      });
    }, ignore);
    return pending;
  };
}
