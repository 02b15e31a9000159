/**
 * Carrying a key's GCRA state across a change of policy. The state is a theoretical arrival time (TAT) per limit, in
 * ticks of `1/ticksPerMs` ms; `quota:period:burst` ids say which numbers wrote it, and so its ticks (`tickUnits`). A
 * key written under other numbers used to start afresh: with two policies alive (a rolling deploy) each switch reset
 * it, and nothing was limited.
 */
import { type GcraLimit, tickUnits } from "./policy";

/**
 * `[ticksPerMs, periodMs]` per limit of a set id (`quota:period:burst` joined by ","); `undefined` when malformed, or
 * when no limit has these numbers (gcraLimit refuses them), so no state was written under them.
 */
function parseSetId(id: string): [number, number][] | undefined {
  const limits: [number, number][] = [];
  for (const part of id.split(",")) {
    const numbers = part.split(":").map(Number);
    const [quota, periodMs, burst] = numbers as [number, number, number];
    if (numbers.length !== 3 || !numbers.every((n) => Number.isSafeInteger(n) && n > 0)) return undefined;
    const units = tickUnits(quota, periodMs, burst);
    if (units === undefined) return undefined;
    limits.push([units[0], periodMs]);
  }
  return limits;
}

/**
 * ⌈a · b / c⌉ for safe integers 0 < a < c and b ≥ 0, exactly. a · b passes 2^53 (ticks per ms reach 10^15 with a
 * quota of 999,999,999,999,999), where the double product and quotient round either way, a tick early at times.
 * Long division over the bits of b, keeping a · (b's bits so far) = q · c + r with 0 ≤ r < c: every value is an
 * integer below 2^53, so exact in doubles; the Redis script runs the same steps (Lua 5.1 has only doubles).
 */
function mulDivCeil(a: number, b: number, c: number): number {
  let q = 0;
  let r = 0;
  let bit = 1;
  while (bit * 2 <= b) bit *= 2;
  for (let rest = b; bit >= 1; bit /= 2) {
    // 2r and r + a may pass 2^53: compared with c − r and c − a, which are exact, they are never formed.
    if (r >= c - r) [q, r] = [2 * q + 1, r - (c - r)];
    else [q, r] = [2 * q, r + r];
    if (rest >= bit) {
      rest -= bit;
      if (r >= c - a) [q, r] = [q + 1, r - (c - a)];
      else r += a;
    }
  }
  return r > 0 ? q + 1 : q;
}

/**
 * Whether x1 / y1 < x2 / y2, exactly, for safe integers x ≥ 0 and y > 0. The cross products x1 · y2 and x2 · y1
 * reach 2^106, where products a few units apart round equal (so a nearer window tied and lost to the first stored one).
 * The continued fractions instead, as Euclid's algorithm steps: whole parts compared, then the inverted remainders;
 * `%` is exact on doubles (ECMA-262 §6.1.6.1.6, like C's fmod), so every value is an integer below 2^53.
 * The Redis script runs the same steps with math.fmod (`NEARER_LUA`).
 */
function ratioBelow(x1: number, y1: number, x2: number, y2: number): boolean {
  for (;;) {
    const [r1, r2] = [x1 % y1, x2 % y2];
    const [q1, q2] = [(x1 - r1) / y1, (x2 - r2) / y2];
    if (q1 !== q2) return q1 < q2;
    if (r2 === 0) return false; // r1 / y1 ≥ 0 = r2 / y2
    if (r1 === 0) return true;
    // r1 / y1 < r2 / y2 exactly when y2 / r2 < y1 / r1; the denominators shrink, so this ends (~78 steps at most).
    [x1, y1, x2, y2] = [y2, r2, y1, r1];
  }
}

/** Whether window `a` is nearer `period` than window `b` is, by ratio (1 s is as near 1 min as 1 h is). */
function nearer(period: number, a: number, b: number): boolean {
  const [aHigh, aLow] = a >= period ? [a, period] : [period, a];
  const [bHigh, bLow] = b >= period ? [b, period] : [period, b];
  return ratioBelow(aHigh, aLow, bHigh, bLow);
}

/**
 * The state to check `limits` with, given the state a key holds under the set `storedId`; pure. Each limit takes the
 * TAT of a stored limit, as the same instant rounded up to a tick of its own (`ticksPerMs`, which may differ from the
 * stored limit's even at the same quota, see `tickUnits`): the stored limit with the same window, else (a window
 * changed: 10/s to 600/min, a pacer's 2/s to 2.5/s) the one left with the nearest window; only a limit for which none
 * is left starts afresh. The TAT is an instant, not a count, so it means the same under any rate
 * and window and does not depend on when it is carried: a Retry-After given under one policy holds under the other (a
 * count carried relative to `now` drifted), and alternating two policies (a rolling deploy) neither resets a key nor
 * lets it gain anything, as a carry one way and back gives the same instant again (up to a tick). A new window started
 * afresh instead, and each switch of a rolling deploy between 10/s and 600/min granted a whole burst.
 * @param storedId the id of the set the state was written for.
 * @param state that state, `[tatMs, tatSub, …]`, or `undefined` for a fresh key.
 * @param id the id of `limits`; when it equals `storedId` the state is returned as it is.
 * @param limits the limits now checked.
 * @param nowMs the check's time, in integer ms: a limit that starts afresh gets it as its TAT.
 * @returns the state for `limits`, or `undefined` for a fresh key.
 */
export function carryState(
  storedId: string,
  state: readonly number[] | undefined,
  id: string,
  limits: readonly GcraLimit[],
  nowMs: number,
): number[] | undefined {
  if (state === undefined) return undefined;
  if (storedId === id) return state as number[];
  const stored = parseSetId(storedId);
  if (stored === undefined) return undefined;
  const taken = stored.map((_, j) => state[2 * j] === undefined);
  const source = new Array<number>(limits.length).fill(-1);
  // The same window first, so that a limit whose window changed cannot take the stored limit another one keeps.
  limits.forEach(({ periodMs }, i) => {
    const j = stored.findIndex(([, period], index) => period === periodMs && !taken[index]);
    if (j !== -1) {
      taken[j] = true;
      source[i] = j;
    }
  });
  limits.forEach(({ periodMs }, i) => {
    if (source[i] !== -1) return;
    let best = -1;
    stored.forEach(([, period], j) => {
      if (!taken[j] && (best === -1 || nearer(periodMs, period, (stored[best] as [number, number])[1]))) best = j;
    });
    if (best !== -1) {
      taken[best] = true;
      source[i] = best;
    }
  });
  const next: number[] = [];
  limits.forEach(({ ticksPerMs }, i) => {
    const j = source[i] as number;
    if (j === -1) {
      next.push(nowMs, 0); // nothing ahead: a full allowance
      return;
    }
    // tatSub / its ticksPerMs ms in ticks of ours, rounded up (never earlier), exactly. A stored sub is below its
    // ticksPerMs (gcraCheck and this write no other); one that is not is at least a whole ms, none is none.
    const [held, from] = [state[2 * j + 1] ?? 0, (stored[j] as [number, number])[0]];
    const sub = held <= 0 ? 0 : held >= from ? ticksPerMs : mulDivCeil(held, ticksPerMs, from);
    const tatMs = state[2 * j] as number;
    if (sub >= ticksPerMs) next.push(tatMs + 1, 0);
    else next.push(tatMs, sub);
  });
  return next;
}
