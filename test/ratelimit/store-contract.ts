/**
 * The contract every RateLimitStore passes, run on the caller's clock so time is scripted.
 * Usage: storeContract("memory", () => ({ store: createMemoryStore() })).
 */
import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { carryState } from "../../src/ratelimit/carry-state";
import { gcraCheck } from "../../src/ratelimit/gcra";
import {
  compilePolicies,
  type GcraOutcome,
  gcraLimit,
  type PolicySet,
  type RateLimitStore,
} from "../../src/ratelimit/index";

export interface StoreUnderTest {
  store: RateLimitStore;
  /** Called once after the suite. */
  close?: () => Promise<void>;
}

const T0 = 1_763_000_000_000;

/** The contract's fields only: a store may return more. */
const outcome = ({ allowed, remaining, resetMs }: GcraOutcome): GcraOutcome => ({ allowed, remaining, resetMs }); // a realistic epoch ms, so that big numbers are exercised

function single(quota: number, windowSeconds: number, burst?: number): PolicySet {
  return compilePolicies([{ name: "p", quota, window: windowSeconds, ...(burst === undefined ? {} : { burst }) }]);
}

export function storeContract(name: string, factory: () => StoreUnderTest | Promise<StoreUnderTest>): void {
  describe(`RateLimitStore contract: ${name}`, () => {
    let subject: StoreUnderTest | undefined;
    let run = 0;
    let prefix = "";
    const store = (): RateLimitStore => {
      if (subject === undefined) throw new Error("store not created");
      return subject.store;
    };

    beforeEach(async () => {
      subject ??= await factory();
      run++;
      prefix = `c${run}_${Math.random().toString(36).slice(2, 8)}:`;
    });
    afterAll(async () => {
      await subject?.close?.();
    });

    describe("one limit", () => {
      it("admits a full burst at once, counting remaining down, then refuses", async () => {
        const set = single(5, 10); // T = 2 s, burst 5
        const remaining: number[] = [];
        for (let i = 0; i < 5; i++) {
          const result = await store().check(`${prefix}k`, set, T0);
          expect(result.allowed).toBe(true);
          remaining.push(result.remaining[0] as number);
        }
        expect(remaining).toEqual([4, 3, 2, 1, 0]);
        const refused = await store().check(`${prefix}k`, set, T0);
        expect(outcome(refused)).toEqual({ allowed: false, remaining: [0], resetMs: [2_000] });
      });

      it("reports ms until one more unit frees up, 0 when the allowance is full", async () => {
        const set = single(3, 1); // T = 333⅓ ms
        expect((await store().check(`${prefix}k`, set, T0)).resetMs).toEqual([334]);
        expect((await store().check(`${prefix}k`, set, T0 + 100)).resetMs).toEqual([234]);
        expect((await store().check(`${prefix}k`, set, T0 + 10_000)).resetMs).toEqual([334]);
      });

      it("admits again exactly when the reset is due, not one ms before", async () => {
        const set = single(3, 1);
        for (let i = 0; i < 3; i++) await store().check(`${prefix}k`, set, T0);
        const refused = await store().check(`${prefix}k`, set, T0);
        const due = T0 + (refused.resetMs[0] as number);
        expect((await store().check(`${prefix}k`, set, due - 1)).allowed).toBe(false);
        expect((await store().check(`${prefix}k`, set, due)).allowed).toBe(true);
      });

      // Regression: past ticks of 1/quota ms (burst · period + quota above 2^53) a policy was refused at construction;
      // it now counts in ticks of g/quota ms, g = gcd(quota, period ms), and every store must do the same arithmetic.
      describe("a limit in reduced ticks", () => {
        // 3·10^12 per 10^12 s: ticks of 1/3 ms. 7 · 3^26 per 3^26 s: ticks of 1/7 ms, and g = 3^26 is odd, so the
        // ticks of 1/quota ms would be odd numbers past 2^53 that a double cannot hold: a store that did not reduce
        // would round them.
        it.each([
          [3_000_000_000_000, 1_000_000_000_000, 10, 3],
          [7 * 3 ** 26, 3 ** 26, 4, 7],
        ])(
          "admits exactly the burst at once, then one per T (%d per %d s, burst %d, T = 1000 ticks of 1/%d ms)",
          async (quota, seconds, burst, ticksPerMs) => {
            const set = single(quota, seconds, burst);
            expect(set.limits[0]).toMatchObject({ ticksPerMs, intervalTicks: 1_000 });
            const remaining: number[] = [];
            for (let i = 0; i < burst; i++) {
              const result = await store().check(`${prefix}k`, set, T0);
              expect(result.allowed).toBe(true);
              remaining.push(result.remaining[0] as number);
            }
            expect(remaining).toEqual(Array.from({ length: burst }, (_, i) => burst - 1 - i));
            const t = (k: number) => Math.ceil((k * 1_000) / ticksPerMs); // k emission intervals in ms, rounded up
            expect(outcome(await store().check(`${prefix}k`, set, T0))).toEqual({
              allowed: false,
              remaining: [0],
              resetMs: [t(1)],
            });
            // The k-th next one is due at T0 + k · T, rounded up to the ms, and not a ms before.
            for (let k = 1; k <= 8; k++) {
              expect((await store().check(`${prefix}k`, set, T0 + t(k) - 1)).allowed).toBe(false);
              expect(outcome(await store().check(`${prefix}k`, set, T0 + t(k)))).toEqual({
                allowed: true,
                remaining: [0],
                resetMs: [t(k + 1) - t(k)],
              });
            }
          },
        );

        it("counts 10 million per 30 days with the default burst (T = 259.2 ms)", async () => {
          const set = single(10_000_000, 30 * 86_400);
          for (let i = 1; i <= 5; i++) {
            expect(outcome(await store().check(`${prefix}k`, set, T0))).toEqual({
              allowed: true,
              remaining: [10_000_000 - i],
              resetMs: [260], // one unit frees up in T
            });
          }
          // TAT T0 + 1296 ms: at T0 + 260 one more is admitted (TAT T0 + 1555.2), 4.997 units still spent.
          expect((await store().check(`${prefix}k`, set, T0 + 260)).remaining).toEqual([10_000_000 - 5]);
          expect((await store().check(`${prefix}k`, set, T0 + 5_000)).remaining).toEqual([10_000_000 - 1]);
        });
      });

      it("does not count refused requests", async () => {
        const set = single(1, 1);
        expect((await store().check(`${prefix}k`, set, T0)).allowed).toBe(true);
        for (let i = 0; i < 10; i++) expect((await store().check(`${prefix}k`, set, T0 + 500)).allowed).toBe(false);
        expect((await store().check(`${prefix}k`, set, T0 + 1_000)).allowed).toBe(true);
      });

      it("keeps keys apart", async () => {
        const set = single(1, 60);
        expect((await store().check(`${prefix}a`, set, T0)).allowed).toBe(true);
        expect((await store().check(`${prefix}b`, set, T0)).allowed).toBe(true);
        expect((await store().check(`${prefix}a`, set, T0)).allowed).toBe(false);
      });

      // Regression: state written under other numbers was ignored, so a changed policy started every key afresh, and a
      // rolling deploy with the old and the new policy alive reset each key at every switch: no limit at all.
      describe("a changed policy carries the key's state", () => {
        it("keeps a key refused while two policies alternate (a rolling deploy)", async () => {
          const before = single(5, 10); // T = 2 s
          const after = single(6, 10); // T = 1⅔ s
          for (let i = 0; i < 5; i++) expect((await store().check(`${prefix}k`, before, T0)).allowed).toBe(true);
          // The TAT (T0 + 10 s) is kept: a full allowance under either policy until a unit frees up.
          for (let i = 0; i < 6; i++) {
            const refusedBefore = await store().check(`${prefix}k`, before, T0);
            expect(outcome(refusedBefore)).toEqual({ allowed: false, remaining: [0], resetMs: [2_000] });
            const refusedAfter = await store().check(`${prefix}k`, after, T0);
            expect(outcome(refusedAfter)).toEqual({ allowed: false, remaining: [0], resetMs: [1_667] });
          }
          expect((await store().check(`${prefix}k`, after, T0 + 1_667)).allowed).toBe(true);
          expect((await store().check(`${prefix}k`, before, T0 + 1_667)).allowed).toBe(false);
        });

        it("a raised quota takes over from the TAT: a Retry-After given under the old one holds under it", async () => {
          expect((await store().check(`${prefix}k`, single(1, 60), T0)).allowed).toBe(true);
          expect(outcome(await store().check(`${prefix}k`, single(1, 60), T0))).toEqual({
            allowed: false,
            remaining: [0],
            resetMs: [60_000],
          });
          // 2 per minute: a unit frees up every 30 s, the first 30 s from now.
          expect(outcome(await store().check(`${prefix}k`, single(2, 60), T0 + 10_000))).toEqual({
            allowed: false,
            remaining: [0],
            resetMs: [20_000],
          });
          expect((await store().check(`${prefix}k`, single(2, 60), T0 + 29_999)).allowed).toBe(false);
          expect((await store().check(`${prefix}k`, single(2, 60), T0 + 30_000)).allowed).toBe(true);
        });

        it("a lowered quota takes over from the TAT: units free up at the new, slower rate", async () => {
          for (let i = 0; i < 10; i++) await store().check(`${prefix}k`, single(10, 10), T0); // full until T0 + 10 s
          const refused = await store().check(`${prefix}k`, single(2, 10), T0 + 1_000);
          expect(outcome(refused)).toEqual({ allowed: false, remaining: [0], resetMs: [4_000] });
          expect((await store().check(`${prefix}k`, single(2, 10), T0 + 4_999)).allowed).toBe(false);
          expect((await store().check(`${prefix}k`, single(2, 10), T0 + 5_000)).allowed).toBe(true);
          // From then on the new policy runs on its own.
          expect(outcome(await store().check(`${prefix}k`, single(2, 10), T0 + 15_000))).toEqual({
            allowed: true,
            remaining: [1],
            resetMs: [5_000],
          });
        });

        it("carries a sub-ms TAT rounded up to a tick of the new quota", async () => {
          // One of 3 per s spent: TAT T0 + 333⅓ ms, carried to 7 per s as T0 + 333³⁄₇ ms.
          await store().check(`${prefix}k`, single(3, 1), T0);
          expect(outcome(await store().check(`${prefix}k`, single(7, 1), T0))).toEqual({
            allowed: true,
            remaining: [3],
            resetMs: [48],
          });
          // TAT T0 + 476²⁄₇ ms, carried to 2 per s as T0 + 476½ ms.
          expect(outcome(await store().check(`${prefix}k`, single(2, 1), T0))).toEqual({
            allowed: true,
            remaining: [0],
            resetMs: [477],
          });
        });

        // Regression: ⌈sub · new / old⌉ was computed in doubles, and 16,373 · 748,040,072,641 passes 2^53: the carried
        // TAT came out a tick early, here (T is one tick) one request more than exact math allows.
        it("carries a sub-ms TAT exactly where the ticks' product passes 2^53 (18,637/day to ~10^15/s)", async () => {
          // 2 of 18,637 a day: TAT T0 + 9,271 ms and 16,373 ticks of 1/18,637 ms (seconds ahead: Redis keeps the key).
          for (let i = 0; i < 2; i++) await store().check(`${prefix}k`, single(18_637, 86_400), T0);
          // 748,040,072,641,000 a second counts in ticks of 1/748,040,072,641 ms, T one tick: the sub-ms part carries
          // as ⌈16,373 · 748,040,072,641 / 18,637⌉ = 657,169,078,144 ticks (doubles said …143), one more for this
          // request.
          const faster = single(748_040_072_641_000, 1);
          expect(outcome(await store().check(`${prefix}k`, faster, T0 + 9_271))).toEqual({
            allowed: true,
            remaining: [748_040_072_641_000 - 657_169_078_145],
            resetMs: [1],
          });
        });

        // Regression: a limit whose window changed started afresh (10/s to 600/min gave a key that had spent its 10 a
        // fresh 600, at each switch of a rolling deploy).
        it("carries by window, and a changed window takes the TAT of the stored limit left", async () => {
          const before = compilePolicies([
            { name: "second", quota: 1, window: 1 },
            { name: "minute", quota: 2, window: 60 },
          ]);
          const after = compilePolicies([
            { name: "minute", quota: 2, window: 60 },
            { name: "hour", quota: 100, window: 3_600 },
          ]);
          expect((await store().check(`${prefix}k`, before, T0)).allowed).toBe(true);
          expect((await store().check(`${prefix}k`, before, T0 + 1_000)).allowed).toBe(true);
          // second's TAT is T0 + 2 s: the hour limit takes it, 500 ms ahead of now (99 left, the 100th in 500 ms).
          const refused = await store().check(`${prefix}k`, after, T0 + 1_500);
          expect(outcome(refused)).toEqual({ allowed: false, remaining: [0, 99], resetMs: [28_500, 500] });
        });

        it("a changed window takes the nearest stored window by ratio, the first of two as near", async () => {
          const before = compilePolicies([
            { name: "second", quota: 1, window: 1, burst: 3 },
            { name: "four", quota: 1, window: 4 },
          ]);
          const after = compilePolicies([{ name: "two", quota: 1, window: 2, burst: 3 }]);
          expect((await store().check(`${prefix}k`, before, T0)).allowed).toBe(true); // TATs T0 + 1 s, T0 + 4 s
          // 1 s and 4 s are as near 2 s: "two" takes second's TAT, 1 s ahead (four's would leave 0, afresh 2).
          expect(outcome(await store().check(`${prefix}k`, after, T0))).toEqual({
            allowed: true,
            remaining: [1],
            resetMs: [1_000],
          });
        });

        it("agrees with the pure GCRA and carryState on random switches between policies", async () => {
          const setArb = fc
            .array(
              // Windows 1 and 4 are as near 2 (by ratio): the tie goes to the first stored limit, in every store.
              fc.oneof(
                fc.tuple(
                  fc.integer({ min: 1, max: 9 }),
                  fc.constantFrom(1, 2, 3, 4, 60),
                  fc.integer({ min: 1, max: 8 }),
                ),
                // 3·10^12 per 10^12 s: burst 1 fits ticks of 1/quota ms, burst 9 or more needs ticks of 1/3 ms.
                fc.tuple(fc.constant(3_000_000_000_000), fc.constant(1_000_000_000_000), fc.constantFrom(1, 9, 12)),
                // 7 · 3^26 per 3^26 s: burst 3 fits, burst 4 or more needs ticks of 1/7 ms (an odd gcd, 3^26).
                fc.tuple(fc.constant(7 * 3 ** 26), fc.constant(3 ** 26), fc.constantFrom(3, 4, 6)),
              ),
              { minLength: 1, maxLength: 2 },
            )
            .map((limits): PolicySet => {
              const compiled = limits.map(([quota, seconds, burst]) => gcraLimit(quota, seconds * 1000, burst));
              return { id: compiled.map((limit) => limit.id).join(","), limits: compiled };
            });
          await fc.assert(
            fc.asyncProperty(
              fc.array(setArb, { minLength: 2, maxLength: 3 }),
              fc.array(fc.tuple(fc.integer({ min: 0, max: 700 }), fc.nat()), { minLength: 1, maxLength: 25 }),
              async (sets, steps) => {
                const key = `${prefix}switch_${Math.random().toString(36).slice(2)}`;
                let held: { id: string; state: number[] } | undefined;
                let now = T0;
                for (const [gap, pick] of steps) {
                  now += gap;
                  const set = sets[pick % sets.length] as PolicySet;
                  const carried =
                    held === undefined ? undefined : carryState(held.id, held.state, set.id, set.limits, now);
                  const expected = gcraCheck(set.limits, carried, now);
                  if (expected.allowed) held = { id: set.id, state: expected.state as number[] };
                  expect(outcome(await store().check(key, set, now))).toEqual(outcome(expected));
                }
              },
            ),
            { numRuns: 40 },
          );
        });
      });

      // Regression: the wait was capped in the answer only, so every 429 said Retry-After: 1 while the key stayed
      // refused for the whole step back (31 refusals over 31 s at 1/s). The TAT is not pulled back either: a caller
      // with an older clock than another on one store would then admit more than the rate.
      it("reports the whole wait when the clock steps back, and admits nothing before it", async () => {
        const set = single(10, 1); // T = 100 ms, burst 10
        for (let i = 0; i < 10; i++) await store().check(`${prefix}k`, set, T0 + 3_600_000);
        const result = await store().check(`${prefix}k`, set, T0);
        expect(outcome(result)).toEqual({ allowed: false, remaining: [0], resetMs: [3_600_100] });
      });

      // Regression: a TAT more than 2^53 ticks ahead (here a minute carried into ticks of 10^-12 ms, or a clock that
      // stepped back) was counted as one double, which rounds: the wait came out a ms or more off (60,001 for 60,000).
      it("reports the exact wait when the TAT is more than 2^53 ticks ahead", async () => {
        expect((await store().check(`${prefix}k`, single(1, 60), T0)).allowed).toBe(true); // TAT T0 + 60 s
        const fine = single(1_000_000_000_000, 9_000_000_000_000, 1); // T = 9 s in ticks of 10^-12 ms
        for (const back of [0, 1, 7, 1_000, 3_600_000]) {
          expect(outcome(await store().check(`${prefix}k`, fine, T0 - back)), String(back)).toEqual({
            allowed: false,
            remaining: [0],
            resetMs: [60_000 + back],
          });
        }
      });

      it("admits a client that obeys Retry-After after the clock steps back, at the time it was told", async () => {
        const set = single(1, 1); // T = 1 s, burst 1
        expect((await store().check(`${prefix}k`, set, T0)).allowed).toBe(true);
        let now = T0 - 30_000; // a process whose clock is 30 s behind, or this one after an NTP step
        const refused = await store().check(`${prefix}k`, set, now);
        expect(outcome(refused)).toEqual({ allowed: false, remaining: [0], resetMs: [31_000] });
        now += refused.resetMs[0] as number;
        expect((await store().check(`${prefix}k`, set, now - 1)).allowed).toBe(false);
        expect((await store().check(`${prefix}k`, set, now)).allowed).toBe(true);
        expect(outcome(await store().check(`${prefix}k`, set, now))).toEqual({
          allowed: false,
          remaining: [0],
          resetMs: [1_000],
        });
      });
    });

    // Regression: the Redis script read a negative time as "use the server's TIME", and read a stored negative TAT
    // as positive: a caller clock before the epoch was not taken as given there, as it is in the other stores.
    describe("times before the epoch", () => {
      it("takes a negative nowMs as given: admits, refuses and admits again when due", async () => {
        const set = single(1, 10); // T = 10 s, burst 1
        const start = -1_000_000;
        expect(outcome(await store().check(`${prefix}k`, set, start))).toEqual({
          allowed: true,
          remaining: [0],
          resetMs: [10_000],
        });
        expect(outcome(await store().check(`${prefix}k`, set, start))).toEqual({
          allowed: false,
          remaining: [0],
          resetMs: [10_000],
        });
        expect((await store().check(`${prefix}k`, set, start + 5_000)).resetMs).toEqual([5_000]);
        expect((await store().check(`${prefix}k`, set, start + 9_999)).allowed).toBe(false);
        expect((await store().check(`${prefix}k`, set, start + 10_000)).allowed).toBe(true);
      });

      it("carries a TAT across the epoch, with a sub-ms remainder", async () => {
        const set = single(3, 1); // T = 333⅓ ms, burst 3
        for (let i = 0; i < 3; i++) expect((await store().check(`${prefix}k`, set, -600)).allowed).toBe(true);
        // TAT = −600 + 1000 = 400; the next unit frees up at 400 − 1000 + 333⅓ = −266⅔.
        expect(outcome(await store().check(`${prefix}k`, set, -300))).toEqual({
          allowed: false,
          remaining: [0],
          resetMs: [34],
        });
        expect((await store().check(`${prefix}k`, set, -266)).allowed).toBe(true);
        expect(outcome(await store().check(`${prefix}k`, set, 0))).toEqual({
          allowed: false,
          remaining: [0],
          resetMs: [67],
        });
      });
    });

    describe("several limits", () => {
      const set = compilePolicies([
        { name: "second", quota: 2, window: 1 },
        { name: "minute", quota: 3, window: 60 },
      ]);

      it("refuses when any limit refuses, and then counts in none", async () => {
        expect((await store().check(`${prefix}k`, set, T0)).remaining).toEqual([1, 2]);
        expect((await store().check(`${prefix}k`, set, T0)).remaining).toEqual([0, 1]);
        const refused = await store().check(`${prefix}k`, set, T0);
        expect(refused.allowed).toBe(false);
        expect(refused.remaining).toEqual([0, 1]); // the minute limit was not charged
        const later = await store().check(`${prefix}k`, set, T0 + 1_000);
        expect(outcome(later)).toEqual({ allowed: true, remaining: [1, 0], resetMs: [500, 19_000] });
        const blocked = await store().check(`${prefix}k`, set, T0 + 2_000);
        expect(blocked.allowed).toBe(false);
        expect(blocked.remaining).toEqual([2, 0]);
      });

      it("after the clock steps back, reports each limit's own wait and admits at the reported time", async () => {
        expect((await store().check(`${prefix}k`, set, T0)).allowed).toBe(true);
        // 1.5 s behind: the second's TAT (T0 + 0.5 s) is 2 s ahead, past its 1 s tolerance; the minute's is not.
        const now = T0 - 1_500;
        const refused = await store().check(`${prefix}k`, set, now);
        expect(outcome(refused)).toEqual({ allowed: false, remaining: [0, 1], resetMs: [1_500, 1_500] });
        const due = now + (refused.resetMs[0] as number);
        expect((await store().check(`${prefix}k`, set, due - 1)).allowed).toBe(false);
        // The minute limit kept its count: one request charged before, one now.
        expect(outcome(await store().check(`${prefix}k`, set, due))).toEqual({
          allowed: true,
          remaining: [0, 1],
          resetMs: [500, 20_000],
        });
      });
    });

    // Regression: the PostgreSQL store keyed rows by the raw key, so a key over ~2.7 KB (the btree row limit) or with a
    // NUL threw (a 500 for a client-chosen API key), and Redis and PostgreSQL read "key\ud800" and "key\udbff" alike.
    describe("keys", () => {
      const set = single(1, 60);
      const firstAdmittedThenRefused = async (keys: readonly string[]) => {
        for (const key of keys) expect((await store().check(key, set, T0)).allowed, JSON.stringify(key)).toBe(true);
        for (const key of keys) expect((await store().check(key, set, T0)).allowed, JSON.stringify(key)).toBe(false);
      };

      it("takes a 10 KB key, and keeps two that differ only in their last character apart", async () => {
        // Random, so that PostgreSQL cannot compress it below its index row limit.
        const long = `${prefix}${randomBytes(7_680).toString("base64url")}`; // 10,240 characters
        await firstAdmittedThenRefused([`${long}a`, `${long}b`]);
      });

      it("takes keys holding NUL and other control characters, each its own", async () => {
        await firstAdmittedThenRefused([
          `${prefix}k`,
          `${prefix}k\u0000`,
          `${prefix}k\u0000a`,
          `${prefix}\u0000\u0001\n`,
        ]);
      });

      it("keeps keys apart that differ only in a character outside the BMP (a surrogate pair)", async () => {
        await firstAdmittedThenRefused([`${prefix}k\u{1F600}`, `${prefix}k\u{1F601}`, `${prefix}k\u{FFFD}`]);
      });

      it("refuses with a TypeError a key that is not well-formed UTF-16 (a lone surrogate), and records nothing", async () => {
        for (const key of [`${prefix}k\ud800`, `${prefix}k\udbff`, `${prefix}k\udc00x`, `${prefix}k\ud800\ud800`]) {
          await expect(store().check(key, set, T0)).rejects.toBeInstanceOf(TypeError);
        }
        await firstAdmittedThenRefused([`${prefix}k\u{FFFD}`, `${prefix}k`]);
      });
    });

    it("admits exactly the burst to parallel checks on one key at one instant, each seeing its own remaining", async () => {
      const set = single(5, 10); // burst 5
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => store().check(`${prefix}k`, set, T0)));
      const admitted = outcomes.filter((result) => result.allowed);
      expect(admitted.map((result) => result.remaining[0]).sort()).toEqual([0, 1, 2, 3, 4]);
      const refused = outcomes.filter((result) => !result.allowed).map(outcome);
      expect(refused).toEqual(Array(15).fill({ allowed: false, remaining: [0], resetMs: [2_000] }));
    });

    // Regression: a store took any number; NaN admitted once and stored a NaN TAT, after which the memory and PostgreSQL
    // stores refused the key for good (with NaN remaining and reset, which no header can carry) — or, with two limits,
    // admitted it every time.
    it("rejects with a TypeError a nowMs that is not a safe integer, and records nothing", async () => {
      const set = single(1, 60);
      for (const nowMs of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 2 ** 53, -(2 ** 53), 1.5]) {
        await expect(store().check(`${prefix}k`, set, nowMs), String(nowMs)).rejects.toBeInstanceOf(TypeError);
      }
      expect((await store().check(`${prefix}k`, set, T0)).allowed).toBe(true);
      expect((await store().check(`${prefix}k`, set, T0)).allowed).toBe(false);
    });

    it("agrees with the pure GCRA on random scripts, with one or two limits", async () => {
      const limitArb = fc
        .oneof(
          fc.tuple(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 8 })),
          // Reduced ticks: 1/3 ms (T = 333⅓ ms), and 1/5 ms (10 million per 30 days, T = 259.2 ms).
          fc.tuple(fc.constant(3_000_000_000_000), fc.constant(1_000_000_000_000), fc.integer({ min: 9, max: 12 })),
          fc.tuple(fc.constant(10_000_000), fc.constant(2_592_000), fc.integer({ min: 3_475_000, max: 10_000_000 })),
          fc.tuple(fc.constant(7 * 3 ** 26), fc.constant(3 ** 26), fc.integer({ min: 4, max: 8 })), // 1/7 ms, odd gcd
        )
        .map(([quota, seconds, burst]) => gcraLimit(quota, seconds * 1000, burst));
      await fc.assert(
        fc.asyncProperty(
          fc.array(limitArb, { minLength: 1, maxLength: 2 }),
          fc.array(fc.integer({ min: 0, max: 700 }), { minLength: 1, maxLength: 25 }),
          // Any integer time (RateLimitStore.check): before the epoch and across it too.
          fc.oneof(fc.constant(T0), fc.constant(-T0), fc.integer({ min: -5_000, max: 0 })),
          async (limits, gaps, start) => {
            const set: PolicySet = { id: limits.map((limit) => limit.id).join(","), limits };
            const key = `${prefix}prop_${Math.random().toString(36).slice(2)}`;
            let state: number[] | undefined;
            let now = start;
            for (const gap of gaps) {
              now += gap;
              const expected = gcraCheck(set.limits, state, now);
              state = expected.state;
              const actual = await store().check(key, set, now);
              expect(outcome(actual)).toEqual(outcome(expected));
            }
          },
        ),
        { numRuns: 40 },
      );
    });
  });
}
