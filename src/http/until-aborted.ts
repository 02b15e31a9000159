/**
 * `work`'s outcome, or a rejection with the signal's reason as soon as `signal` aborts, whichever comes first. The
 * work itself goes on (nothing here can stop it); a rejection it ends with later is handled, never unhandled.
 */
export function untilAborted<T>(work: PromiseLike<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    Promise.resolve(work).catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", abort);
        reject(error);
      },
    );
  });
}
