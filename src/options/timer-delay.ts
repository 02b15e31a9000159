/**
 * The longest delay a Node.js timer keeps. Past it `setTimeout` and `setInterval` fire after 1 ms instead (with a
 * TimeoutOverflowWarning): a poll interval, a lease, a time-out or a stop grace that long became a busy loop, or no
 * wait at all (the delivery worker's timers, the system resolver's time-out, the webhook processor's handler time-out).
 * Internal.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** `ms` as a timer can wait it: cut to {@link MAX_TIMER_MS} (about 24.8 days). Internal. */
export function timerDelay(ms: number): number {
  return ms > MAX_TIMER_MS ? MAX_TIMER_MS : ms;
}
