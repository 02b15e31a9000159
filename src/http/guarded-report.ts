import type { AdapterOptions } from "./adapter-options";
import { logError } from "./adapter-options";
import type { HttpRequest } from "./message";

/** What an adapter reports an error through: `onError`, never throwing. */
export type Reporter = (error: unknown, request: HttpRequest | undefined) => void;

/**
 * The adapter's `onError` (or the default logger), made safe to call where nothing can catch: an `onError` that
 * throws (a failing logger, a reporter that rethrows) must not crash the process or lose the client's 500, so its
 * own failure goes to stderr beside the error it was reporting.
 */
export function guardedReporter(options: Pick<AdapterOptions, "onError">): Reporter {
  const onError = options.onError ?? logError;
  return (error, request) => {
    try {
      onError(error, request);
    } catch (failure) {
      // The I/O edge: logging here is allowed, and there is nobody else to tell.
      console.error("rest-webhooks: onError threw while reporting an error", { failure, error });
    }
  };
}
