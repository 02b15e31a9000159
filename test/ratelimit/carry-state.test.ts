/**
 * carryState across a change of window. A limit whose window was new started afresh, so a pacer moved from 2/s to
 * 2.5/s (2 per 1 s, then 2500 per 1000 s) sent a delivery at once, and a policy moved from 10/s to 600/min gave a key
 * that had just spent its 10 a fresh 600: each switch of a rolling deploy between the two granted a whole burst.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { carryState } from "../../src/ratelimit/carry-state";
import { gcraCheck } from "../../src/ratelimit/gcra";
import { compilePolicies, createEndpointRateLimiter, type PolicySet } from "../../src/ratelimit/index";
import { type GcraLimit, gcraLimit } from "../../src/ratelimit/policy";

const T0 = 1_763_000_000_000;

interface Held {
  id: string;
  state: number[] | undefined;
}

/** One request for a key held as `held`, checked under `set` at `now`, as every store does. */
function check(held: Held, set: PolicySet, now: number): boolean {
  const state = held.state === undefined ? undefined : carryState(held.id, held.state, set.id, set.limits, now);
  const step = gcraCheck(set.limits, state, now);
  if (step.allowed) {
    held.id = set.id;
    held.state = step.state;
  }
  return step.allowed;
}

function admittedAtOnce(held: Held, set: PolicySet, now: number, tries: number): number {
  let admitted = 0;
  for (let i = 0; i < tries; i++) if (check(held, set, now)) admitted++;
  return admitted;
}

const single = (quota: number, window: number, burst?: number): PolicySet =>
  compilePolicies([{ name: "p", quota, window, ...(burst === undefined ? {} : { burst }) }]);

describe("carryState: a change of window", () => {
  it("10/s to 600/min: a key that spent its 10 gets 590 more, not a fresh 600", () => {
    const held: Held = { id: "", state: undefined };
    expect(admittedAtOnce(held, single(10, 1), T0, 20)).toBe(10);
    expect(admittedAtOnce(held, single(600, 60), T0, 1_000)).toBe(590);
  });

  it("600/min to 10/s: a key that spent its 600 gets nothing at once", () => {
    const held: Held = { id: "", state: undefined };
    expect(admittedAtOnce(held, single(600, 60), T0, 1_000)).toBe(600);
    expect(admittedAtOnce(held, single(10, 1), T0, 20)).toBe(0);
  });

  it("keeps a key refused while 10/s and 600/min alternate at one instant (a rolling deploy)", () => {
    const held: Held = { id: "", state: undefined };
    let admitted = 0;
    for (let i = 0; i < 50; i++) {
      admitted += admittedAtOnce(held, single(10, 1), T0, 20);
      admitted += admittedAtOnce(held, single(600, 60), T0, 1_000);
    }
    expect(admitted).toBe(600);
  });

  it("pairs each new window with the stored limit of the nearest window, the same window first", () => {
    const before = compilePolicies([
      { name: "second", quota: 1, window: 1, burst: 5 },
      { name: "hour", quota: 100, window: 3_600 },
    ]);
    const after = compilePolicies([
      { name: "hour", quota: 100, window: 3_600 },
      { name: "minute", quota: 10, window: 60 },
    ]);
    const held: Held = { id: "", state: undefined };
    expect(admittedAtOnce(held, before, T0, 10)).toBe(5); // second: TAT T0 + 5 s; hour: T0 + 180 s
    const state = carryState(held.id, held.state as number[], after.id, after.limits, T0);
    // hour keeps its own; minute takes second's (the only one left), as the same instant in its ticks.
    expect(state).toEqual([T0 + 180_000, 0, T0 + 5_000, 0]);
  });

  it("starts afresh only a limit for which no stored limit is left", () => {
    const before = single(10, 1);
    const after = compilePolicies([
      { name: "minute", quota: 600, window: 60 },
      { name: "day", quota: 10_000, window: 86_400 },
    ]);
    const held: Held = { id: "", state: undefined };
    admittedAtOnce(held, before, T0, 10); // TAT T0 + 1 s
    expect(carryState(held.id, held.state as number[], after.id, after.limits, T0 + 10)).toEqual([
      T0 + 1_000,
      0,
      T0 + 10,
      0,
    ]);
  });

  const limitArb = fc
    .tuple(fc.integer({ min: 1, max: 12 }), fc.constantFrom(1, 2, 3, 5, 60), fc.integer({ min: 1, max: 12 }))
    .map(([quota, seconds, burst]) => gcraLimit(quota, seconds * 1000, burst));

  // Law: a TAT never moves back, and each admission moves it on by at least the smallest emission interval T; one is
  // admitted only while the TAT is at most its tolerance b·T ahead. So in every closed interval of length L, however
  // the policies alternate, n · min T ≤ L + max b·T. A reset at a switch breaks it: each switch gave a whole burst.
  it("never admits more, however two policies of any windows alternate, than n · min T ≤ L + max b·T", () => {
    fc.assert(
      fc.property(
        limitArb,
        limitArb,
        fc.array(fc.tuple(fc.integer({ min: 0, max: 900 }), fc.boolean(), fc.integer({ min: 1, max: 15 })), {
          minLength: 1,
          maxLength: 30,
        }),
        (a, b, steps) => {
          const sets = [a, b].map((limit): PolicySet => ({ id: limit.id, limits: [limit] }));
          const held: Held = { id: "", state: undefined };
          const times: number[] = [];
          let now = T0;
          for (const [gap, pickB, tries] of steps) {
            now += gap;
            for (let i = 0; i < tries; i++) if (check(held, sets[pickB ? 1 : 0] as PolicySet, now)) times.push(now);
          }
          // Exactly, in integers: T = periodMs / quota; the faster policy gives min T, the other's b·T may be larger.
          const fast = a.periodMs * b.quota <= b.periodMs * a.quota ? a : b;
          const wide = a.burst * a.periodMs * b.quota >= b.burst * b.periodMs * a.quota ? a : b;
          const [tn, td] = [wide.burst * wide.periodMs, wide.quota]; // max b·T = tn / td ms
          for (let i = 0; i < times.length; i++) {
            for (let j = i; j < times.length; j++) {
              const n = j - i + 1;
              const length = (times[j] as number) - (times[i] as number);
              // n · fast.periodMs / fast.quota ≤ length + tn / td
              expect(n * fast.periodMs * td).toBeLessThanOrEqual((length * td + tn) * fast.quota);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("carries a TAT into a new window as the same instant or later, never earlier", () => {
    fc.assert(
      fc.property(limitArb, limitArb, fc.integer({ min: 1, max: 20 }), (from, to, spent) => {
        const held: Held = { id: "", state: undefined };
        const fromSet: PolicySet = { id: from.id, limits: [from] };
        admittedAtOnce(held, fromSet, T0, spent);
        const [ms, sub] = held.state as [number, number];
        const [carriedMs, carriedSub] = carryState(held.id, held.state as number[], to.id, [to], T0) as [
          number,
          number,
        ];
        // ms + sub / from.quota ≤ carriedMs + carriedSub / to.quota < that + 1 / to.quota
        const before = ms * from.quota * to.quota + sub * to.quota;
        const after = carriedMs * from.quota * to.quota + carriedSub * from.quota;
        expect(after).toBeGreaterThanOrEqual(before);
        expect(after).toBeLessThan(before + from.quota);
      }),
      { numRuns: 300 },
    );
  });
});

// A limit past ticks of 1/quota ms counts in ticks of g/quota ms (g = gcd(quota, period ms)); a limit that fits keeps
// 1/quota ms. Carrying between the two converts the sub-ms part between the units, rounded up, never earlier.
describe("carryState: between a limit in reduced ticks and one in ticks of 1/quota ms", () => {
  // 10 million per 30 days: ticks of 1/5 ms by default (reduced), of 1/10^7 ms with burst 5 (fits).
  const reduced = single(10_000_000, 2_592_000);
  const fitting = single(10_000_000, 2_592_000, 5);

  it("converts the sub-ms part each way, and back to the same state", () => {
    expect(reduced.limits[0]?.ticksPerMs).toBe(5);
    expect(fitting.limits[0]?.ticksPerMs).toBe(10_000_000);
    expect(carryState(reduced.id, [T0, 3], fitting.id, fitting.limits, T0)).toEqual([T0, 6_000_000]);
    expect(carryState(fitting.id, [T0, 6_000_000], reduced.id, reduced.limits, T0)).toEqual([T0, 3]);
    // 1/10^7 ms past a fifth: the next fifth, never earlier; past the last fifth: the next ms.
    expect(carryState(fitting.id, [T0, 6_000_001], reduced.id, reduced.limits, T0)).toEqual([T0, 4]);
    expect(carryState(fitting.id, [T0, 8_000_001], reduced.id, reduced.limits, T0)).toEqual([T0 + 1, 0]);
  });

  it("keeps a key refused while the two alternate at one instant, and paces it at T = 259.2 ms", () => {
    const held: Held = { id: "", state: undefined };
    // 5 at once under burst 5 (TAT T0 + 1296 ms); the default burst then still admits the quota less those 5.
    expect(admittedAtOnce(held, fitting, T0, 10)).toBe(5);
    expect(check(held, fitting, T0 + 259)).toBe(false);
    expect(check(held, reduced, T0 + 259)).toBe(true); // TAT T0 + 1555.2 ms
    expect(check(held, fitting, T0 + 259)).toBe(false);
    expect(check(held, fitting, T0 + 518)).toBe(false); // 1555.2 − 518 > 4 · 259.2
    expect(check(held, fitting, T0 + 519)).toBe(true); // TAT T0 + 1814.4 ms
    expect(held.state).toEqual([T0 + 1_814, 4_000_000]);
    expect(check(held, reduced, T0 + 519)).toBe(true);
    expect(held.state).toEqual([T0 + 2_073, 3]); // 1814.4 + 259.2 = 2073.6 ms
  });
});

// Regression: the sub-ms part was converted as ⌈sub · new / old⌉ ticks in doubles, and sub · new passes 2^53 once a
// quota reaches ~10^13 per window (ticks per ms up to 10^15), where the product and the quotient round: a TAT carried
// one tick early (a whole request where T is one tick), and equal to what the Redis script computed only because it
// made the same mistake.
describe("carryState: the sub-ms part converted exactly, past 2^53", () => {
  /** ⌈sub · to / from⌉ ticks of `to` per ms, in BigInt: the exact carry of `[tatMs, sub]`. */
  function exactCarry(tatMs: number, sub: number, from: number, to: number): [number, number] {
    const ticks = (BigInt(sub) * BigInt(to) + BigInt(from) - 1n) / BigInt(from);
    return ticks >= BigInt(to) ? [tatMs + 1, 0] : [tatMs, Number(ticks)];
  }

  it("68,759/s to 994,987,528,557,000/s: 12 spent carry as ⌈12,000 · 994,987,528,557 / 68,759⌉ ticks", () => {
    const from = single(68_759, 1);
    const to = single(994_987_528_557_000, 1); // ticks of 1/994,987,528,557 ms, T = 1 tick
    expect(to.limits[0]).toMatchObject({ ticksPerMs: 994_987_528_557, intervalTicks: 1 });
    const held: Held = { id: "", state: undefined };
    expect(admittedAtOnce(held, from, T0, 12)).toBe(12);
    expect(held.state).toEqual([T0, 12_000]);
    // 12,000 · 994,987,528,557 / 68,759 = 173,647,818,361.000…6: doubles said …361, a request more than exact math.
    expect(carryState(held.id, held.state as number[], to.id, to.limits, T0)).toEqual([T0, 173_647_818_362]);
    expect(check(held, to, T0)).toBe(true);
    expect(held.state).toEqual([T0, 173_647_818_363]);
  });

  const quota = fc.oneof(
    fc.integer({ min: 1, max: 100_000 }),
    fc.maxSafeNat().map((n) => (n % 999_999_999_999_999) + 1),
  );
  // Any policy compilePolicies accepts, its burst the default, 1 or a few.
  const setArb = fc
    .tuple(quota, fc.constantFrom(1, 60, 3_600, 86_400, 2_592_000), fc.constantFrom(undefined, 1, 10, 1_000))
    .map(([q, window, burst]) => {
      try {
        return single(q, window, burst);
      } catch {
        return undefined; // past exact arithmetic even in reduced ticks: refused, so no state is written under it
      }
    })
    .filter((set): set is PolicySet => set !== undefined);
  // gcraLimit alone takes any safe quota whose tolerance fits: ticks per ms up to 2^53 − 2.
  const anyLimit = fc.oneof(
    setArb,
    fc.maxSafeNat().map((n): PolicySet => {
      const limit = gcraLimit((n % (Number.MAX_SAFE_INTEGER - 1)) + 1, 1, 1);
      return { id: limit.id, limits: [limit] };
    }),
  );

  // Any sub below the stored ticks per ms can be held: a reduced limit's interval is coprime to its ticks per ms, so
  // k admissions reach k · T mod ticksPerMs, every residue; and a carry writes any value.
  it("carries any state between any two accepted policies as exact (BigInt) math does", () => {
    fc.assert(
      fc.property(anyLimit, anyLimit, fc.maxSafeNat(), (from, to, n) => {
        const [a, b] = [from.limits[0] as GcraLimit, to.limits[0] as GcraLimit];
        const sub = n % a.ticksPerMs;
        const carried = carryState(from.id, [T0, sub], to.id, to.limits, T0);
        expect(carried).toEqual(exactCarry(T0, sub, a.ticksPerMs, b.ticksPerMs));
      }),
      { numRuns: 5_000 },
    );
  });
});

// Regression: which stored window is nearest a new one was decided by comparing products of two windows in doubles,
// and a product of ms values passes 2^53 once windows reach ~3 years: products a unit apart rounded equal, the tie
// kept the first stored limit, and a limit whose window changed took the farther stored limit's TAT.
describe("carryState: the nearest window found exactly, past 2^53", () => {
  /** The stored limit whose TAT a limit of `period` ms takes from `[a, b]`: ratios compared in BigInt, a tie to `a`. */
  function exactNearest(period: number, a: number, b: number): "a" | "b" {
    if (a === period) return "a"; // the same window first
    if (b === period) return "b";
    const ratio = (x: number): [bigint, bigint] =>
      x >= period ? [BigInt(x), BigInt(period)] : [BigInt(period), BigInt(x)];
    const [[aHigh, aLow], [bHigh, bLow]] = [ratio(a), ratio(b)];
    return bHigh * aLow < aHigh * bLow ? "b" : "a";
  }

  /** Carries a state written under limits of windows `[a, b]` ms into one of `period` ms: whose TAT it takes. */
  function carried(period: number, a: number, b: number): "a" | "b" | undefined {
    // quota = window and burst 1: one tick per ms after reduction, valid for every safe window.
    const [from, to] = [[gcraLimit(a, a, 1), gcraLimit(b, b, 1)], [gcraLimit(period, period, 1)]];
    const state = carryState(from.map((l) => l.id).join(","), [T0 + 1, 0, T0 + 2, 0], to[0]?.id ?? "", to, T0);
    return state?.[0] === T0 + 1 ? "a" : state?.[0] === T0 + 2 ? "b" : undefined;
  }

  it("100,000,000 s takes 100,000,001 s (ratio 1 + 10^-8), not 99,999,999 s (1 + 1.00000001 · 10^-8)", () => {
    const before = compilePolicies([
      { name: "shorter", quota: 1, window: 99_999_999 },
      { name: "longer", quota: 1, window: 100_000_001 },
    ]);
    const after = single(1, 100_000_000);
    // 99,999,999,000 · 100,000,001,000 = 10^22 − 10^6 ms², below 100,000,000,000² = 10^22: both round to 10^22.
    expect(carryState(before.id, [T0 + 1, 0, T0 + 2, 0], after.id, after.limits, T0)).toEqual([T0 + 2, 0]);
  });

  const max = Number.MAX_SAFE_INTEGER;
  // Any safe window, and windows near the limits and near each other (where products round equal).
  const window = fc.oneof(
    fc.maxSafeNat().map((n) => n + 1 - (n === max ? 1 : 0)),
    fc.integer({ min: 1, max: 1_000 }),
    fc.integer({ min: max - 1_000, max }),
  );
  const triple = fc.oneof(
    fc.tuple(window, window, window),
    // a period between two windows d apart: a·b = period² − d², products from 2^53 to near 2^106, as in the example.
    fc
      .tuple(fc.integer({ min: 94_906_266, max: max - 3 }), fc.integer({ min: 1, max: 3 }))
      .map(([p, d]) => [p, p - d, p + d] as [number, number, number]),
    // two windows near 2^53 and any period: products near 2^106.
    fc
      .tuple(window, fc.integer({ min: -2, max: 2 }), fc.integer({ min: -2, max: 2 }))
      .map(([x, d, e]) => [x, Math.min(max, Math.max(1, max - 3 + d)), Math.min(max, Math.max(1, max - 3 + e))]),
    // windows k · period and k · period + d: ratios near k.
    fc.tuple(fc.integer({ min: 2, max: 2 ** 26 }), window, fc.integer({ min: -2, max: 2 })).map(([k, x, d]) => {
      const period = Math.max(1, Math.floor(x / k));
      return [period, Math.min(max, Math.max(1, period * k)), Math.min(max, Math.max(1, period * k + d))];
    }),
  );

  it("takes the stored limit whose window is nearest by ratio, as BigInt math does, for any safe windows", () => {
    const edges: [number, number, number][] = [
      [100_000_000_000, 99_999_999_000, 100_000_001_000],
      [max, max - 1, max - 2],
      [1, max, max - 1],
      [max, 1, 2],
      [2 ** 52, 2 ** 52 + 2, 2 ** 52 + 1],
    ];
    for (const [period, a, b] of edges) {
      expect(carried(period, a, b)).toBe(exactNearest(period, a, b));
      expect(carried(period, b, a)).toBe(exactNearest(period, b, a));
    }
    fc.assert(
      fc.property(triple, ([period, a, b]) => {
        expect(carried(period, a, b)).toBe(exactNearest(period, a, b));
        expect(carried(period, b, a)).toBe(exactNearest(period, b, a));
      }),
      { numRuns: 10_000 },
    );
  });
});

describe("createEndpointRateLimiter: a rate change across windows", () => {
  it("2/s to 2.5/s keeps the endpoint's pacing: no delivery at once", async () => {
    const pacer = createEndpointRateLimiter();
    expect(await pacer.acquire("ep", 2, 0)).toEqual({ allowed: true }); // next at 500 ms
    expect(await pacer.acquire("ep", 2.5, 0)).toEqual({ allowed: false, retryAtMs: 500 });
    expect(await pacer.acquire("ep", 2.5, 499)).toEqual({ allowed: false, retryAtMs: 500 });
    expect(await pacer.acquire("ep", 2.5, 500)).toEqual({ allowed: true });
    expect(await pacer.acquire("ep", 1 / 3, 500)).toEqual({ allowed: false, retryAtMs: 900 });
  });
});
