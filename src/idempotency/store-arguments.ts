import { positiveInteger } from "../options/number-option";

/*
 * The checks every IdempotencyStore makes of its durations before it reads or writes, so that the memory, Redis and
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
