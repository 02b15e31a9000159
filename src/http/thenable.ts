/**
 * Whether `value` is a promise (or any thenable) rather than a plain answer: extension points here (handlers,
 * `identify`, validators, stores) may answer either way, and a plain answer is used in the same tick.
 */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | null | undefined)?.then === "function";
}
