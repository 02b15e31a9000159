import type { DeliveryState } from "./delivery/state-machine";

/**
 * The one rule every store keeps for times: whole epoch milliseconds, a fraction dropped on the way in
 * (`Math.floor`, as `timestampOf` does in SQL). A clock gives fractions (`performance.timeOrigin +
 * performance.now()`); were they kept in memory and rounded by PostgreSQL's read, the stores would answer a due
 * time or a lease end a fraction apart. With whole stored times, the comparisons the stores make (`due <= now`,
 * `leaseUntil > now`) answer alike for a fractional `now` and for `Math.floor(now)`, which PostgreSQL compares with.
 */
export const wholeMs = (ms: number): number => Math.floor(ms);

const orNull = (ms: number | null): number | null => (ms === null ? null : Math.floor(ms));

/** A delivery state with its times made whole milliseconds (the same object when they already are). */
export function wholeMsState(state: DeliveryState): DeliveryState {
  const { nextAttemptAt, lastAttemptAt, deliveredAt } = state;
  if (orNull(nextAttemptAt) === nextAttemptAt && orNull(lastAttemptAt) === lastAttemptAt) {
    if (orNull(deliveredAt) === deliveredAt) return state;
  }
  return {
    ...state,
    nextAttemptAt: orNull(nextAttemptAt),
    lastAttemptAt: orNull(lastAttemptAt),
    deliveredAt: orNull(deliveredAt),
  };
}
