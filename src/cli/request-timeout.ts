import { linkedAbort } from "./linked-abort";

/**
 * `check --timeout`: a time limit on each request `check` sends, from the request until the last byte of the
 * answer. Without one, a server that accepts the connection and never answers holds `check` (and the CI job
 * running it) until something else kills it, with no verdict.
 */

/**
 * The default limit per request, in seconds: far above any answer a healthy API gives, with room for a cold start
 * and a loaded CI machine, yet a hung server still gets its verdict in minutes rather than undici's 300 s per
 * request (each fast-check run and shrink would wait it again).
 */
export const DEFAULT_TIMEOUT_SECONDS = 30;

/** A request that got no (whole) answer within `--timeout`. */
export class RequestTimeoutError extends Error {
  readonly code = "cli_request_timeout";
  override readonly name = "RequestTimeoutError";
}

/** A fetch that gives up after a time limit, and what a law run needs to know about it. */
export interface TimedFetch {
  readonly fetch: typeof fetch;
  /** Starts a new law: forgets a time-out seen by the previous one. */
  reset(): void;
}

/**
 * A fetch whose every request is aborted, with a {@link RequestTimeoutError} naming it, after `seconds`. Once one
 * request timed out, the others fail at once with the same error until {@link TimedFetch.reset}: fast-check
 * shrinks a failure by running the law again and again, and a hung server would make each run wait the limit.
 * @example const timed = timedFetch(30); fromBaseUrl("http://127.0.0.1:3000", timed.fetch);
 */
export function timedFetch(seconds: number, base: typeof fetch = fetch): TimedFetch {
  let timedOut: RequestTimeoutError | undefined;
  const send: typeof fetch = async (input, init) => {
    if (timedOut !== undefined) throw timedOut;
    const request = new Request(input, init);
    const error = new RequestTimeoutError(
      `${request.method} ${request.url}: no answer within ${seconds} s (--timeout ${seconds})`,
    );
    // The caller's own abort still applies: its signal itself, not the Request's copy (see below).
    const own = init?.signal ?? (input instanceof Request ? input.signal : undefined);
    const { controller, release } = linkedAbort([own]);
    const timer = setTimeout(() => controller.abort(error), seconds * 1000);
    // The open socket keeps the process alive while a request waits; an answer nobody read must not.
    timer.unref();
    const finish = () => {
      clearTimeout(timer);
      release();
    };
    // Only a time-out someone waited for counts: an answer whose body nobody read is no hung server.
    const seen = (failure: unknown): never => {
      finish();
      if (failure === error) timedOut = error;
      throw failure;
    };
    // The signal goes to fetch itself: a Request made to carry it, once collected, stops passing the abort on
    // (undici holds a Request's own controller only while the Request lives).
    const response = await base(request, { signal: controller.signal }).catch(seen);
    // A status the Response constructor refuses (600 and up) keeps its answer as sent, without a body limit.
    if (response.body === null || response.status < 200 || response.status > 599) {
      finish();
      return response;
    }
    // The limit runs until the body ends: a server may send its headers and then stall.
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(stream) {
        const chunk = await reader.read().catch(seen);
        if (chunk.done) {
          finish();
          stream.close();
        } else stream.enqueue(chunk.value);
      },
      cancel(reason) {
        finish();
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  return {
    fetch: send,
    reset() {
      timedOut = undefined;
    },
  };
}
