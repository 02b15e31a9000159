import { positiveInteger } from "../options/number-option";
import type { StoredResponse } from "./store";

/*
 * The checks every IdempotencyStore makes of its arguments before it reads or writes, so that the memory, Redis and
 * PostgreSQL stores refuse the same values with the same TypeError. Unchecked, a lease of 0 or less was acquired
 * already dead in memory and PostgreSQL where Redis threw a ReplyError, and the memory store alone kept 1.5, NaN or
 * Infinity (a 409 with an infinite Retry-After).
 */

/** `IdempotencyStore.begin`'s `leaseMs`: a positive integer number of milliseconds (Redis `PX` takes no other). */
export function checkLeaseMs(leaseMs: number): void {
  positiveInteger("IdempotencyStore.begin", "leaseMs", leaseMs, "milliseconds");
}

/** `IdempotencyStore.complete`'s `ttlMs`: a positive integer number of milliseconds. */
export function checkTtlMs(ttlMs: number): void {
  positiveInteger("IdempotencyStore.complete", "ttlMs", ttlMs, "milliseconds");
}

/**
 * `IdempotencyStore.complete`'s `response.status`: an integer in 100..599 (RFC 9110 §15: values outside are invalid).
 * Redis and PostgreSQL read no other back: unchecked, they wrote the record and then failed every begin on the key
 * (idempotency_record_invalid) until it expired, where memory replayed it.
 */
export function checkStatus(response: StoredResponse): void {
  const status: unknown = response?.status;
  if (typeof status !== "number" || !Number.isInteger(status) || status < 100 || status > 599) {
    throw new TypeError(
      `IdempotencyStore.complete: response.status must be an integer in 100..599, got ${String(status)}.`,
    );
  }
}
