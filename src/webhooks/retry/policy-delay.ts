/**
 * The longest a retry waits (365 days), whatever the retry policy answers: far beyond any schedule in use (Standard
 * Webhooks waits 10 h at most), and a due time every queue and inbox can store (PostgreSQL refuses a timestamp past
 * the year 294276, a JavaScript Date past 275760).
 */
export const MAX_RETRY_DELAY_MS = 31_536_000_000;

/**
 * A retry policy's answer as the delivery worker and the webhook processor both read it. One that is no number of ms
 * (NaN, ±Infinity) is `undefined`, no attempt left, as `undefined` is: there is no time to wait for, and a due time no
 * store takes would run the attempt again at every lease's end. A negative delay is none; a longer one than
 * {@link MAX_RETRY_DELAY_MS} is cut to it.
 * @param answer what the policy returned.
 * @returns the delay in ms, or `undefined` when no attempt is left.
 * @example policyDelay(policy(attempts, random)) // undefined: dead-letter or exhaust
 */
export function policyDelay(answer: number | undefined): number | undefined {
  if (answer === undefined || !Number.isFinite(answer)) return undefined;
  return Math.min(Math.max(0, answer), MAX_RETRY_DELAY_MS);
}
