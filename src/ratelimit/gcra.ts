/**
 * The Generic Cell Rate Algorithm (ITU-T I.371 "virtual scheduling"), in exact integer ticks.
 *
 * Per limit the state is one Theoretical Arrival Time (TAT), held as `[tatMs, tatSub]` meaning
 * `tatMs + tatSub / ticksPerMs` ms (`GcraLimit.ticksPerMs`: the quota, or quota / gcd(quota, period ms) for a
 * limit that does not fit ticks of 1/quota ms below 2^53). A request at `now` is admitted when
 * `max(TAT, now) + T - now <= burst · T` (T the emission interval, `intervalTicks`), and then TAT becomes
 * `max(TAT, now) + T`. Equivalently: in every closed interval of length L the admitted requests number at
 * most `burst + L / T`; so any half-open window of the policy's length w = quota · T holds at most
 * `burst + quota − 1` (tested in gcra-model.test.ts).
 */
import type { GcraLimit } from "./policy";

/** The raw outcome of one check against several limits. */
export interface GcraOutcome {
  /** Whether every limit admits the request (when not, no limit records it). */
  allowed: boolean;
  /** Per limit, the units left after this decision. */
  remaining: number[];
  /** Per limit, ms until one more unit is available (0 when the allowance is already full). */
  resetMs: number[];
}

/** A check's outcome plus the state to store. */
export interface GcraStep extends GcraOutcome {
  /** The flat `[tatMs, tatSub, …]` state to keep: new when admitted, the old one when refused. */
  state: number[] | undefined;
  /** When the state stops mattering: past this instant every limit is full again. */
  expiresAtMs: number;
}

// Exact floor(a / b) for non-negative safe integers: the float quotient can round up across an integer.
function floorDiv(a: number, b: number): number {
  let k = Math.floor(a / b);
  if (k * b > a) k--;
  else if ((k + 1) * b <= a) k++;
  return k;
}

function ceilDiv(a: number, b: number): number {
  return floorDiv(a + b - 1, b);
}

/**
 * Ticks (1/ticksPerMs ms) by which the stored TAT is ahead of `nowMs`, at least 0: `max(TAT, now) − now`. Not capped
 * at the tolerance: only a clock that stepped back, or a caller passing an older `now` than another (several
 * processes on one store), leaves it further ahead, and pulling the TAT back would admit more than the rate.
 */
function aheadTicks(ticksPerMs: number, state: readonly number[] | undefined, index: number, nowMs: number): number {
  if (state === undefined) return 0;
  const ahead = (state[2 * index] ?? 0) - nowMs;
  const sub = state[2 * index + 1] ?? 0;
  if (ahead < 0 || (ahead === 0 && sub <= 0)) return 0;
  return ahead * ticksPerMs + sub;
}

/** Units left once `d` ticks are ahead: none while the TAT is past the tolerance (floorDiv takes no negatives). */
function unitsLeft(tolerance: number, d: number, interval: number): number {
  return d >= tolerance ? 0 : floorDiv(tolerance - d, interval);
}

/**
 * The wait of a refused limit whose TAT is more than 2^53 − 1 ticks ahead (a clock that stepped back far, a TAT
 * carried into fine ticks): there `aheadMs · ticksPerMs + sub` is not exact as a double, and the wait came out a ms or
 * more off. With the ms kept apart every value is exact:
 * ⌈(aheadMs · p + sub − (b − 1) · T) / p⌉ = aheadMs + ⌈(sub − (b − 1) · T) / p⌉.
 */
function farResetMs(limit: GcraLimit, state: readonly number[], index: number, nowMs: number): number {
  const { ticksPerMs: p, intervalTicks: t, burst } = limit;
  const aheadMs = (state[2 * index] as number) - nowMs;
  const sub = state[2 * index + 1] ?? 0;
  const spare = (burst - 1) * t;
  return sub >= spare ? aheadMs + ceilDiv(sub - spare, p) : aheadMs - floorDiv(spare - sub, p);
}

/** Ms until one more unit of a limit `d` ticks ahead with `left` units frees up (0 when its allowance is full). */
function resetMsOf(
  limit: GcraLimit,
  state: readonly number[] | undefined,
  index: number,
  nowMs: number,
  d: number,
  left: number,
): number {
  if (d > Number.MAX_SAFE_INTEGER) return farResetMs(limit, state as number[], index, nowMs);
  const { ticksPerMs, intervalTicks: t, burst } = limit;
  // One more unit frees up once the TAT falls to tolerance − (left + 1)·T.
  return left >= burst ? 0 : ceilDiv(d - burst * t + (left + 1) * t, ticksPerMs);
}

/**
 * Decides one request against every limit at once; pure.
 * @param limits the compiled limits of one policy set.
 * @param state the stored flat state for these limits, or `undefined` for a fresh key.
 * @param nowMs integer milliseconds on the clock the state was written with.
 * @param into where to write the new state when admitted (may be `state` itself, to reuse it); a new array by default.
 */
export function gcraCheck(
  limits: readonly GcraLimit[],
  state: readonly number[] | undefined,
  nowMs: number,
  into?: number[],
): GcraStep {
  const n = limits.length;
  if (n === 1) return gcraCheckOne(limits[0] as GcraLimit, state, nowMs, into);
  // First pass: `remaining` holds each limit's ticks ahead until the second pass replaces them.
  const remaining = new Array<number>(n);
  const resetMs = new Array<number>(n);
  let allowed = true;
  for (let i = 0; i < n; i++) {
    const limit = limits[i] as GcraLimit;
    const d = aheadTicks(limit.ticksPerMs, state, i, nowMs);
    remaining[i] = d;
    if (d + limit.intervalTicks > limit.burst * limit.intervalTicks) allowed = false;
  }
  const next = allowed ? (into ?? new Array<number>(2 * n)) : undefined;
  let expiresAtMs = nowMs;
  for (let i = 0; i < n; i++) {
    const { ticksPerMs, intervalTicks: t, burst } = limits[i] as GcraLimit;
    const tolerance = burst * t;
    const d = (remaining[i] as number) + (allowed ? t : 0);
    const left = unitsLeft(tolerance, d, t);
    remaining[i] = left;
    resetMs[i] = resetMsOf(limits[i] as GcraLimit, state, i, nowMs, d, left);
    if (next !== undefined) {
      const whole = floorDiv(d, ticksPerMs);
      next[2 * i] = nowMs + whole;
      next[2 * i + 1] = d - whole * ticksPerMs;
      const expires = nowMs + ceilDiv(d, ticksPerMs);
      if (expires > expiresAtMs) expiresAtMs = expires;
    }
  }
  return { allowed, remaining, resetMs, state: next ?? (state as number[] | undefined), expiresAtMs };
}

// The common single-policy case without the loops and holey arrays: same arithmetic as above.
function gcraCheckOne(
  limit: GcraLimit,
  state: readonly number[] | undefined,
  nowMs: number,
  into: number[] | undefined,
): GcraStep {
  const { ticksPerMs, intervalTicks: t, burst } = limit;
  const tolerance = burst * t;
  let d = aheadTicks(ticksPerMs, state, 0, nowMs);
  const allowed = d + t <= tolerance;
  if (allowed) d += t;
  const left = unitsLeft(tolerance, d, t);
  const reset = resetMsOf(limit, state, 0, nowMs, d, left);
  if (!allowed) {
    return { allowed, remaining: [left], resetMs: [reset], state: state as number[] | undefined, expiresAtMs: nowMs };
  }
  const whole = floorDiv(d, ticksPerMs);
  let next: number[];
  if (into === undefined) next = [nowMs + whole, d - whole * ticksPerMs];
  else {
    next = into;
    next[0] = nowMs + whole;
    next[1] = d - whole * ticksPerMs;
  }
  return { allowed, remaining: [left], resetMs: [reset], state: next, expiresAtMs: nowMs + ceilDiv(d, ticksPerMs) };
}
