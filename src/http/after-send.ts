import type { HttpResponse } from "./message";

/**
 * Where a response carries work to run once it has been sent. `Symbol.for`, so that the ESM and
 * CJS copies of the package agree on the key.
 */
const AFTER_SEND: unique symbol = Symbol.for("rest-webhooks.after-send");

/**
 * A response that may carry a callback to run once it has been sent. The key is a symbol, so the
 * callback survives wrappers that copy the response with spread (`{ ...response, headers }`).
 *
 * The rule for wrappers: the callback that runs is the one of the response the client is answered with. A
 * wrapper that answers with a new response in place of the handler's (a 304 or 412 for its 200) carries the
 * handler's callback onto it with {@link carryAfterSend}; a response the wrapper made and never sends (the
 * GET that `conditional()` runs to answer a HEAD) takes its callback with it, unrun.
 */
export type AfterSendResponse = HttpResponse & { [AFTER_SEND]?: () => void };

/**
 * Attaches `callback` to `response`, to be run by the I/O layer once the response has been sent;
 * a callback already attached runs first.
 * @param response the response to send; it is returned, with the callback attached.
 * @param callback must not throw (the I/O layer runs it outside any request).
 * @example return withAfterSend(empty(202), () => runner.wake());
 */
export function withAfterSend(response: HttpResponse, callback: () => void): AfterSendResponse {
  const carrier = response as AfterSendResponse;
  const before = carrier[AFTER_SEND];
  carrier[AFTER_SEND] =
    before === undefined
      ? callback
      : () => {
          before();
          callback();
        };
  return carrier;
}

/**
 * Removes the after-send callback from `response` and returns it, so that it runs exactly once: both
 * adapters (`rest-webhooks/node`, `rest-webhooks/fetch`) call this before sending and run the
 * callback after; your own I/O glue does the same.
 * @param response the response about to be sent.
 * @returns the callback, or `undefined` when the response carries none.
 * @example
 * const callback = takeAfterSend(response);
 * if (callback !== undefined) res.once("finish", callback); // node:http: the response was handed to the OS
 * sendResponse(res, response);
 */
export function takeAfterSend(response: HttpResponse): (() => void) | undefined {
  const carrier = response as AfterSendResponse;
  const callback = carrier[AFTER_SEND];
  if (callback !== undefined) delete carrier[AFTER_SEND];
  return callback;
}

/**
 * Attaches the after-send callback of `from` to `to`, for a wrapper that answers with `to` in place of `from`
 * (a 304 built for the handler's 200), so that the work the handler scheduled still runs once the client has
 * its answer; a callback `to` already carries runs first. `from` is left as it is (it is not sent).
 * @param from the response that is replaced.
 * @param to the response sent instead; it is returned, with the callback attached.
 * @example return carryAfterSend(response, empty(304, notModifiedHeaders(response.headers)));
 */
export function carryAfterSend(from: HttpResponse, to: HttpResponse): AfterSendResponse {
  const callback = (from as AfterSendResponse)[AFTER_SEND];
  // The same object already carries it: attaching again would run it twice.
  return callback === undefined || from === to ? to : withAfterSend(to, callback);
}
