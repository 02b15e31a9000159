/**
 * Model test: the limiter against a sliding-log reference on a fake clock.
 *
 * The bound (documented in docs/rate-limits.md): with emission interval T = window / quota and burst b,
 * every closed interval of length L holds at most b + L / T admitted requests. The reference admits a
 * request exactly when doing so keeps that bound for every interval, by checking the log of admitted
 * times; it shares no code with the limiter.
 *
 * The two statements the docs make in terms of the advertised `q` per `w` are checked on their own:
 * any window of w seconds admits at most b + q − 1, and with b ≥ q (the default) a client that never
 * sends more than q in any w seconds is never refused.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createRateLimiter, type RateLimitPolicy } from "../../src/ratelimit/index";

interface Exact {
  quota: number;
  periodMs: number;
  burst: number;
}

const exact = (policy: RateLimitPolicy): Exact => ({
  quota: policy.quota,
  periodMs: policy.window * 1000,
  burst: policy.burst ?? policy.quota,
});

/** count ≤ b + L/T, in integers: (count − b) · window ≤ L · quota. */
function withinBound(p: Exact, count: number, lengthMs: number): boolean {
  return (count - p.burst) * p.periodMs <= lengthMs * p.quota;
}

/** Would admitting one more at `t` keep every interval ending at `t` within the bound? */
function referenceAdmits(p: Exact, log: readonly number[], t: number): boolean {
  let count = 1;
  for (let i = log.length - 1; i >= 0; i--) {
    count++;
    if (!withinBound(p, count, t - (log[i] as number))) return false;
  }
  return withinBound(p, 1, 0);
}

const policyArb = fc
  .record({ quota: fc.integer({ min: 1, max: 10 }), window: fc.integer({ min: 1, max: 5 }) })
  .chain(({ quota, window }) =>
    fc.record({
      name: fc.constant("p"),
      quota: fc.constant(quota),
      window: fc.constant(window),
      burst: fc.option(fc.integer({ min: 1, max: 2 * quota }), { nil: undefined }),
    }),
  )
  .map((policy): RateLimitPolicy => (policy.burst === undefined ? { ...policy, burst: undefined } : policy));

const gapsArb = fc.array(
  fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 3_000 })),
  {
    minLength: 1,
    maxLength: 60,
  },
);

describe("GCRA limiter vs the sliding-log reference", () => {
  it("admits exactly what the reference admits (never more in any window, never refuses what it admits)", async () => {
    await fc.assert(
      fc.asyncProperty(policyArb, gapsArb, async (policy, gaps) => {
        const limiter = createRateLimiter({ policies: [policy] });
        const p = exact(policy);
        const log: number[] = [];
        let now = 1_700_000_000_000;
        for (const gap of gaps) {
          now += gap;
          const decision = await limiter.check("k", now);
          expect(decision.allowed).toBe(referenceAdmits(p, log, now));
          if (decision.allowed) log.push(now);
        }
        // The bound itself, over every interval between admitted requests.
        for (let i = 0; i < log.length; i++) {
          for (let j = i; j < log.length; j++) {
            expect(withinBound(p, j - i + 1, (log[j] as number) - (log[i] as number))).toBe(true);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it("with several policies, admits when every reference admits and counts only admitted requests", async () => {
    await fc.assert(
      fc.asyncProperty(policyArb, policyArb, gapsArb, async (first, second, gaps) => {
        const policies = [first, { ...second, name: "q" }];
        const limiter = createRateLimiter({ policies });
        const models = policies.map(exact);
        const log: number[] = [];
        let now = 0;
        for (const gap of gaps) {
          now += gap;
          const decision = await limiter.check("k", now);
          const each = models.map((p) => referenceAdmits(p, log, now));
          expect(decision.allowed).toBe(each.every(Boolean));
          if (!decision.allowed) expect(decision.results.map((r) => r.allowed)).toEqual(each);
          if (decision.allowed) log.push(now);
        }
      }),
      { numRuns: 150 },
    );
  });

  it("reports remaining and retry-after that the reference confirms to the ms", async () => {
    await fc.assert(
      fc.asyncProperty(policyArb, gapsArb, async (policy, gaps) => {
        const limiter = createRateLimiter({ policies: [policy] });
        const p = exact(policy);
        const log: number[] = [];
        let now = 0;
        for (const gap of gaps) {
          now += gap;
          const decision = await limiter.check("k", now);
          if (decision.allowed) log.push(now);
          const result = decision.results[0];
          if (result === undefined) throw new Error("no result");
          // `remaining` more are admitted at this very instant, and not one more.
          const burst = [...log];
          for (let i = 0; i < result.remaining; i++) {
            expect(referenceAdmits(p, burst, now)).toBe(true);
            burst.push(now);
          }
          expect(referenceAdmits(p, burst, now)).toBe(false);
          // The next request is admitted exactly retryAfterMs from now, and not a ms earlier.
          const wait = decision.retryAfterMs;
          expect(referenceAdmits(p, log, now + wait)).toBe(true);
          if (wait > 0) expect(referenceAdmits(p, log, now + wait - 1)).toBe(false);
          // Retry-After in whole seconds is never early; resetSeconds is never later than it.
          if (!decision.allowed) expect(referenceAdmits(p, log, now + result.retryAfterSeconds * 1000)).toBe(true);
          expect(result.resetSeconds * 1000).toBeGreaterThanOrEqual(wait);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("admits a full window's quota at once by default, then one per emission interval", async () => {
    const limiter = createRateLimiter({ policies: [{ name: "p", quota: 100, window: 60 }] });
    let admitted = 0;
    for (let i = 0; i < 150; i++) if ((await limiter.check("k", 0)).allowed) admitted++;
    expect(admitted).toBe(100);
    expect((await limiter.check("k", 599)).allowed).toBe(false);
    expect((await limiter.check("k", 600)).allowed).toBe(true);
  });

  describe('in terms of the advertised q per w (docs/rate-limits.md, "The guarantee")', () => {
    it("admits at most burst + q − 1 in any window of w seconds", async () => {
      await fc.assert(
        fc.asyncProperty(policyArb, gapsArb, async (policy, gaps) => {
          const limiter = createRateLimiter({ policies: [policy] });
          const { quota, periodMs, burst } = exact(policy);
          const log: number[] = [];
          let now = 0;
          for (const gap of gaps) {
            now += gap;
            if ((await limiter.check("k", now)).allowed) log.push(now);
          }
          // Every window [s, s + w) that holds admissions can start at one: count from each.
          for (let i = 0; i < log.length; i++) {
            let inWindow = 0;
            for (let j = i; j < log.length && (log[j] as number) < (log[i] as number) + periodMs; j++) inWindow++;
            expect(inWindow).toBeLessThanOrEqual(burst + quota - 1);
          }
        }),
        { numRuns: 300 },
      );
    });

    it("never refuses a client that sends at most q in any window of w seconds, when burst ≥ q (the default)", async () => {
      const generousArb = policyArb.map(
        (policy): RateLimitPolicy => ({
          ...policy,
          burst: policy.burst === undefined ? undefined : Math.max(policy.burst, policy.quota),
        }),
      );
      await fc.assert(
        fc.asyncProperty(generousArb, gapsArb, async (policy, gaps) => {
          const limiter = createRateLimiter({ policies: [policy] });
          const { quota, periodMs } = exact(policy);
          const sent: number[] = [];
          let now = 0;
          for (const gap of gaps) {
            now += gap;
            // The client keeps to the advertised policy: it skips a request that would make q + 1 in (now − w, now].
            const recent = sent.filter((t) => t > now - periodMs).length;
            if (recent >= quota) continue;
            sent.push(now);
            expect((await limiter.check("k", now)).allowed).toBe(true);
          }
        }),
        { numRuns: 300 },
      );
    });

    it("reaches 2q − 1 in one window with the default burst (the documented worst case)", async () => {
      const limiter = createRateLimiter({ policies: [{ name: "p", quota: 10, window: 1 }] }); // T = 100 ms
      let admitted = 0;
      for (let i = 0; i < 10; i++) if ((await limiter.check("k", 0)).allowed) admitted++;
      for (let t = 100; t < 1_000; t += 100) if ((await limiter.check("k", t)).allowed) admitted++;
      expect(admitted).toBe(19); // all within [0 ms, 1000 ms)
      expect((await limiter.check("k", 999)).allowed).toBe(false);
    });

    it("holds to q in any window with burst: 1 (evenly spaced)", async () => {
      const limiter = createRateLimiter({ policies: [{ name: "p", quota: 10, window: 1, burst: 1 }] });
      let admitted = 0;
      for (let t = 0; t < 1_000; t += 10) if ((await limiter.check("k", t)).allowed) admitted++;
      expect(admitted).toBe(10);
    });
  });
});
