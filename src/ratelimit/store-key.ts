import { isWellFormed } from "../http/well-formed";

/**
 * Checks a key the way every store does: a string of well-formed UTF-16. Redis and PostgreSQL take keys as UTF-8,
 * which cannot encode a lone surrogate (both read one as U+FFFD, so "k\ud800" and "k\udbff" shared a bucket); the
 * memory store, which could keep it, refuses it too, so that a key one store takes every store takes, as itself.
 * Any other string is a key: of any length, with NUL or any other character.
 * @throws TypeError when `key` is not a string, or holds a lone surrogate (RFC 3629 §3: UTF-8 has no form for one).
 */
export function assertStoreKey(key: unknown): asserts key is string {
  if (typeof key !== "string") throw new TypeError(`rate limit store: key must be a string, got ${typeof key}.`);
  // The key is not quoted: it may be an API key.
  if (!isWellFormed(key)) {
    throw new TypeError(
      "rate limit store: key must be well-formed UTF-16, got a string with a lone surrogate (key.toWellFormed() replaces them with U+FFFD).",
    );
  }
}

/**
 * Checks a check's time the way every store does: a safe integer of ms. GCRA is exact in integers below 2^53 only, and
 * a NaN stored as a TAT would fail every later comparison: the key would be refused (or admitted) for good.
 * @throws TypeError when `nowMs` is not a safe integer.
 */
export function assertStoreNow(nowMs: unknown): asserts nowMs is number {
  if (typeof nowMs !== "number" || !Number.isSafeInteger(nowMs)) {
    const got = typeof nowMs === "number" ? nowMs : typeof nowMs;
    throw new TypeError(`rate limit store: nowMs must be an integer number of ms within ±2^53, got ${got}.`);
  }
}

/**
 * A limiter's `prefix` option: a string of well-formed UTF-16, as every key the store sees begins with it. One with a
 * lone surrogate made every check reject (every request a 500 under the `rateLimit` wrapper), however good the key.
 * @throws TypeError naming `owner` when `prefix` is not such a string.
 */
export function prefixOption(owner: string, prefix: unknown, fallback: string): string {
  if (prefix === undefined) return fallback;
  if (typeof prefix !== "string" || !isWellFormed(prefix)) {
    const got = typeof prefix === "string" ? "a string with a lone surrogate" : typeof prefix;
    throw new TypeError(`${owner}: options.prefix must be a string of well-formed UTF-16, got ${got}.`);
  }
  return prefix;
}
