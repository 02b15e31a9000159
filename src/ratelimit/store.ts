import type { GcraOutcome } from "./gcra";
import type { PolicySet } from "./policy";

/**
 * Where GCRA state lives. A store applies {@link gcraCheck} semantics atomically per key: it checks the
 * request against every limit of the set and records it in all of them only when all admit it.
 * Every implementation passes the shared contract suite (`test/ratelimit/store-contract.ts`).
 */
export interface RateLimitStore {
  /**
   * Checks and, when admitted, records one request for `key`.
   * @param key any string of well-formed UTF-16; one with a lone surrogate rejects with a `TypeError` in every store.
   * @param nowMs integer ms on the caller's clock, any safe integer (before the epoch too: taken as given); anything
   *   else rejects with a `TypeError` in every store. A store with its own clock (Redis `TIME`) may ignore it, which is
   *   why the outcome carries durations only.
   */
  check(key: string, set: PolicySet, nowMs: number): Promise<GcraOutcome>;
  /** The same as {@link check} without a promise, for stores that need no I/O (the limiter prefers it). */
  checkSync?(key: string, set: PolicySet, nowMs: number): GcraOutcome;
}

export type { GcraOutcome } from "./gcra";
