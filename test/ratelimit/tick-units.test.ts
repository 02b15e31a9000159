/**
 * The GCRA's tick units: ticks of 1/quota ms where `burst · period + quota` fits below 2^53, else of g/quota ms with
 * g = gcd(quota, period ms). Checked against a reference in BigInt ticks of 1/quota ms, which never overflows and
 * shares no code with the GCRA; and the state a limit that fits stores is pinned to what earlier versions stored.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { carryState } from "../../src/ratelimit/carry-state";
import { gcraCheck } from "../../src/ratelimit/gcra";
import { compilePolicies, type GcraLimit, gcraLimit } from "../../src/ratelimit/index";

interface Model {
  /** TAT per limit in ticks of 1/quota ms, or undefined for a fresh key. */
  tat: (bigint | undefined)[];
}

/** One check against the reference: the GCRA (ITU-T I.371 virtual scheduling) in exact rationals. */
function referenceCheck(limits: readonly GcraLimit[], model: Model, nowMs: number) {
  const now = BigInt(nowMs);
  const per = limits.map((limit, i) => {
    const q = BigInt(limit.quota);
    const t = BigInt(limit.periodMs); // T = period / quota ms = period ticks of 1/quota ms
    const tolerance = BigInt(limit.burst) * t;
    const tat = model.tat[i];
    const ahead = tat === undefined || tat <= now * q ? 0n : tat - now * q;
    return { q, t, tolerance, ahead };
  });
  const allowed = per.every(({ t, tolerance, ahead }) => ahead + t <= tolerance);
  const remaining: number[] = [];
  const resetMs: number[] = [];
  per.forEach(({ q, t, tolerance, ahead }, i) => {
    const d = allowed ? ahead + t : ahead;
    const left = d >= tolerance ? 0n : (tolerance - d) / t;
    remaining.push(Number(left));
    const wait = d - tolerance + (left + 1n) * t; // ticks until one more unit: ms rounded up
    resetMs.push(left >= BigInt((limits[i] as GcraLimit).burst) ? 0 : Number((wait + q - 1n) / q));
    if (allowed) model.tat[i] = now * q + d;
  });
  return { allowed, remaining, resetMs };
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

// Quotas that share many factors with the window's ms (the case the reduction is for) and ones that share few.
const anyLimitArb = fc
  .record({
    seconds: fc.oneof(fc.integer({ min: 1, max: 120 }), fc.constantFrom(86_400, 2_592_000, 31_536_000, 10 ** 12)),
    factor: fc.integer({ min: 1, max: 50 }),
    shared: fc.integer({ min: 1, max: 2 ** 40 }),
    burst: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
  })
  .map(({ seconds, factor, shared, burst }) => {
    const periodMs = seconds * 1000;
    return { quota: Math.min(gcd(periodMs, shared) * factor, 999_999_999_999_999), periodMs, burst };
  });

// Limits that need the reduction: T = t / k ms (t a divisor of the window's ms) under a long window, with the default
// burst (the quota) or, under the longest windows, a burst past what ticks of 1/quota ms hold.
const reducedLimitArb = fc
  .record({
    seconds: fc.constantFrom(2_592_000, 31_536_000, 10 ** 12, 3 ** 26),
    // Large divisors of the windows below, so that the quota stays within 15 digits.
    divisor: fc.oneof(
      fc.integer({ min: 1, max: 2_000 }),
      fc.constantFrom(1_296, 10_000, 3 ** 9, 3 ** 12, 8 * 3 ** 8, 10 ** 6),
    ),
    k: fc.integer({ min: 1, max: 50 }),
  })
  .chain((limit) =>
    // A small burst (so that refusals happen) needs the reduction only under windows of 10^15 ms or so.
    (limit.seconds >= 10 ** 12 ? fc.integer({ min: 4, max: 14 }) : fc.constant(undefined)).map((burst) => ({
      ...limit,
      burst,
    })),
  )
  .map(({ seconds, divisor, k, burst }) => {
    const periodMs = seconds * 1000;
    return { quota: (periodMs / gcd(periodMs, divisor)) * k, periodMs, burst };
  })
  .filter(({ quota }) => quota <= 999_999_999_999_999);

const limitArb = fc
  .oneof(anyLimitArb, reducedLimitArb)
  .filter(({ quota, periodMs, burst }) => {
    try {
      gcraLimit(quota, periodMs, burst ?? quota);
      return true;
    } catch {
      return false; // past even the reduced range: refused, tested in policy.test.ts
    }
  })
  .map(({ quota, periodMs, burst }) => gcraLimit(quota, periodMs, burst ?? quota));

/** Gaps scaled to the limit's emission interval, so that bursts, refusals and recoveries all happen. */
const stepsArb = fc.array(fc.tuple(fc.constantFrom(0, 0, 1, 2), fc.double({ min: 0, max: 1.5, noNaN: true })), {
  minLength: 1,
  maxLength: 40,
});

describe("GCRA ticks vs a BigInt reference", () => {
  it("admits, counts and waits exactly as the reference, in units that fit or reduced ones", () => {
    fc.assert(
      fc.property(fc.array(limitArb, { minLength: 1, maxLength: 2 }), stepsArb, (limits, steps) => {
        const model: Model = { tat: limits.map(() => undefined) };
        const intervalMs = Math.max(1, Math.ceil((limits[0] as GcraLimit).periodMs / (limits[0] as GcraLimit).quota));
        let state: number[] | undefined;
        let now = 1_763_000_000_000;
        for (const [kind, scale] of steps) {
          now += kind === 0 ? 0 : kind === 1 ? Math.floor(scale * intervalMs) : Math.floor(scale * 1000);
          const step = gcraCheck(limits, state, now);
          const expected = referenceCheck(limits, model, now);
          expect({ allowed: step.allowed, remaining: step.remaining, resetMs: step.resetMs }).toEqual(expected);
          state = step.state;
          // The state holds the reference's TAT exactly: tatMs + tatSub / ticksPerMs ms.
          limits.forEach((limit, i) => {
            const tat = model.tat[i];
            if (tat === undefined || state === undefined) return;
            const q = BigInt(limit.quota);
            const g = q / BigInt(limit.ticksPerMs);
            expect(BigInt(state[2 * i] as number) * q + BigInt(state[2 * i + 1] as number) * g).toBe(tat);
            expect(state[2 * i + 1]).toBeLessThan(limit.ticksPerMs);
          });
        }
      }),
      { numRuns: 500 },
    );
  });
});

// Computed with the code before the reduction (ticks of 1/quota ms for every limit): a limit that fits them must keep
// storing these very numbers, which the memory, Redis and PostgreSQL stores hold across an upgrade.
describe("state of a limit that fits ticks of 1/quota ms, bit for bit as before", () => {
  const gaps = [0, 0, 1, 333, 17, 0, 5000, 2, 999, 1];
  const run = (set: ReturnType<typeof compilePolicies>) => {
    let state: number[] | undefined;
    let now = 1_763_000_000_000;
    return gaps.map((gap) => {
      now += gap;
      const step = gcraCheck(set.limits, state, now);
      state = step.state;
      return [step.allowed, step.remaining, step.resetMs, step.state, step.expiresAtMs];
    });
  };

  it("3 per second", () => {
    expect(run(compilePolicies([{ name: "a", quota: 3, window: 1 }]))).toEqual([
      [true, [2], [334], [1763000000333, 1], 1763000000334],
      [true, [1], [334], [1763000000666, 2], 1763000000667],
      [true, [0], [333], [1763000001000, 0], 1763000001000],
      [true, [0], [333], [1763000001333, 1], 1763000001334],
      [false, [0], [316], [1763000001333, 1], 1763000000351],
      [false, [0], [316], [1763000001333, 1], 1763000000351],
      [true, [2], [334], [1763000005684, 1], 1763000005685],
      [true, [1], [332], [1763000006017, 2], 1763000006018],
      [true, [2], [334], [1763000006685, 1], 1763000006686],
      [true, [1], [333], [1763000007018, 2], 1763000007019],
    ]);
  });

  it("7 per minute (burst 2) and 1000 per day", () => {
    const set = compilePolicies([
      { name: "a", quota: 7, window: 60, burst: 2 },
      { name: "b", quota: 1000, window: 86_400 },
    ]);
    expect(run(set)).toEqual([
      [true, [1, 999], [8572, 86400], [1763000008571, 3, 1763000086400, 0], 1763000086400],
      [true, [0, 998], [8572, 86400], [1763000017142, 6, 1763000172800, 0], 1763000172800],
      [false, [0, 998], [8571, 86399], [1763000017142, 6, 1763000172800, 0], 1763000000001],
      [false, [0, 998], [8238, 86066], [1763000017142, 6, 1763000172800, 0], 1763000000334],
      [false, [0, 998], [8221, 86049], [1763000017142, 6, 1763000172800, 0], 1763000000351],
      [false, [0, 998], [8221, 86049], [1763000017142, 6, 1763000172800, 0], 1763000000351],
      [false, [0, 998], [3221, 81049], [1763000017142, 6, 1763000172800, 0], 1763000005351],
      [false, [0, 998], [3219, 81047], [1763000017142, 6, 1763000172800, 0], 1763000005353],
      [false, [0, 998], [2220, 80048], [1763000017142, 6, 1763000172800, 0], 1763000006352],
      [false, [0, 998], [2219, 80047], [1763000017142, 6, 1763000172800, 0], 1763000006353],
    ]);
  });

  // gcd(10^6, 3,600,000) = 10^6 would make these ticks of 1 ms: the sub-ms part shows they stay 1/10^6 ms.
  it("a million per hour, which also fits reduced ticks", () => {
    expect(run(compilePolicies([{ name: "a", quota: 1_000_000, window: 3_600 }]))).toEqual([
      [true, [999999], [4], [1763000000003, 600000], 1763000000004],
      [true, [999998], [4], [1763000000007, 200000], 1763000000008],
      [true, [999997], [3], [1763000000010, 800000], 1763000000011],
      [true, [999999], [4], [1763000000337, 600000], 1763000000338],
      [true, [999999], [4], [1763000000354, 600000], 1763000000355],
      [true, [999998], [4], [1763000000358, 200000], 1763000000359],
      [true, [999999], [4], [1763000005354, 600000], 1763000005355],
      [true, [999998], [2], [1763000005358, 200000], 1763000005359],
      [true, [999999], [4], [1763000006355, 600000], 1763000006356],
      [true, [999998], [3], [1763000006359, 200000], 1763000006360],
    ]);
  });

  it("carries between limits that fit as before", () => {
    const seven = compilePolicies([{ name: "a", quota: 7, window: 1 }]);
    expect(carryState("3:1000:3", [1_763_000_000_001, 2], seven.id, seven.limits, 0)).toEqual([1763000000001, 5]);
    const two = compilePolicies([
      { name: "a", quota: 11, window: 60 },
      { name: "b", quota: 13, window: 86_400 },
    ]);
    const state = [1_763_000_000_001, 5, 1_763_000_000_003, 999];
    expect(carryState("7:60000:2,1000:86400000:1000", state, two.id, two.limits, 0)).toEqual([
      1763000000001, 8, 1763000000004, 0,
    ]);
  });
});
