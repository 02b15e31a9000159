import { describe, expect, it } from "vitest";
import {
  compilePolicies,
  createRateLimiter,
  type RateLimitPolicy,
  rateLimit,
  rateLimitHeaders,
} from "../../src/ratelimit/index";

describe("compilePolicies", () => {
  // Regression: a quota up to ~9e15 compiled, but RateLimit-Policy sends q as an RFC 9651 Integer (at most 15
  // digits), so { quota: 1e15, window: 1 } made rateLimit() throw at construction, and rateLimitHeaders(decision) on
  // every request.
  describe("refuses a value the headers send as an Integer above 999,999,999,999,999 (RFC 9651 §3.3.1)", () => {
    it.each([
      ["quota", { name: "p", quota: 1e15, window: 1, burst: 1 }],
      ["window", { name: "p", quota: 1, window: 1e15, burst: 1 }],
    ])("%s", (option, policy) => {
      expect(() => compilePolicies([policy])).toThrow(TypeError);
      expect(() => compilePolicies([policy])).toThrow(
        new RegExp(`${option} must be at most 999999999999999.*RFC 9651`),
      );
      expect(() => createRateLimiter({ policies: [policy] })).toThrow(TypeError);
    });
  });

  // Regression: a window whose ms pass 2^53 (above 9,007,199,254,740 s) was refused as "period must be a positive
  // integer, got 10000000000000000": an option the policy does not have, with a value it was not given.
  it("refuses a window whose ms are not a safe integer, naming the window and the value given", () => {
    const policy = { name: "p", quota: 1, window: 1e13, burst: 1 };
    expect(() => compilePolicies([policy])).toThrow(TypeError);
    expect(() => compilePolicies([policy])).toThrow(
      /rate limit: window must be at most 9007199254740 .*got 10000000000000\b/,
    );
    expect(() => compilePolicies([{ ...policy, window: 9_007_199_254_740 }])).not.toThrow();
  });

  // Regression: 10 million a month and a million a year (the default burst, the quota) were refused: ticks of 1/quota
  // ms made burst × period pass 2^53, though the emission interval (259.2 ms, 31.536 s) is a few ticks of g/quota ms,
  // g = gcd(quota, period ms).
  describe("takes a plan quota over a long window, in ticks of gcd(quota, period)/quota ms", () => {
    it.each<[string, RateLimitPolicy, { ticksPerMs: number; intervalTicks: number }]>([
      [
        "10 million per 30 days",
        { name: "monthly", quota: 10_000_000, window: 30 * 86_400 },
        { ticksPerMs: 5, intervalTicks: 1_296 },
      ],
      [
        "a million per year",
        { name: "yearly", quota: 1_000_000, window: 365 * 86_400 },
        { ticksPerMs: 1, intervalTicks: 31_536 },
      ],
    ])("%s", async (_case, policy, units) => {
      const set = compilePolicies([policy]);
      expect(set.limits[0]).toMatchObject({ quota: policy.quota, periodMs: policy.window * 1000, ...units });
      expect(set.id).toBe(`${policy.quota}:${policy.window * 1000}:${policy.quota}`);
      const limiter = createRateLimiter({ policies: [policy] });
      const decision = await limiter.check("k", 0);
      expect(decision.allowed).toBe(true);
      expect(decision.results[0]?.remaining).toBe(policy.quota - 1);
    });

    it("keeps ticks of 1/quota ms for a limit that fits them (the state it stores stays the same)", () => {
      expect(compilePolicies([{ name: "p", quota: 1_000_000, window: 3_600 }]).limits[0]).toMatchObject({
        ticksPerMs: 1_000_000,
        intervalTicks: 3_600_000,
      });
    });
  });

  // Regression: "burst × window is too large to compute exactly" named no number, and a policy that set no burst
  // (the burst defaults to the quota) was not told that the burst is what to lower.
  describe("refuses a burst × interval past exact arithmetic, with the numbers and what to lower", () => {
    it.each<[string, RateLimitPolicy, RegExp]>([
      [
        "the default burst (the quota), a prime quota over 30 days",
        { name: "monthly", quota: 10_000_019, window: 2_592_000 },
        /burst 10000019 × \(period 2592000000 ms \/ 1\) \+ quota 10000019 \/ 1, where 1 = gcd\(quota, period\)/,
      ],
      [
        "a burst given",
        { name: "p", quota: 1, window: 1, burst: 2 ** 50 },
        /burst 1125899906842624 × \(period 1000 ms \/ 1\) \+ quota 1 \/ 1/,
      ],
    ])("%s", (_case, policy, message) => {
      expect(() => compilePolicies([policy])).toThrow(TypeError);
      expect(() => compilePolicies([policy])).toThrow(message);
      expect(() => compilePolicies([policy])).toThrow(/lower the burst \(it defaults to the quota\)/);
      expect(() => createRateLimiter({ policies: [policy] })).toThrow(TypeError);
    });

    it("takes the largest burst that fits", () => {
      const burst = Math.floor((Number.MAX_SAFE_INTEGER - 1) / 1000);
      expect(() => compilePolicies([{ name: "p", quota: 1, window: 1, burst }])).not.toThrow();
      expect(() => compilePolicies([{ name: "p", quota: 1, window: 1, burst: burst + 1 }])).toThrow(TypeError);
    });

    it("takes the largest burst that fits the reduced ticks (10 million per 30 days: T = 1296 ticks of 1/5 ms)", () => {
      const burst = Math.floor((Number.MAX_SAFE_INTEGER - 5) / 1_296);
      const monthly = { name: "p", quota: 10_000_000, window: 2_592_000 };
      expect(() => compilePolicies([{ ...monthly, burst }])).not.toThrow();
      expect(() => compilePolicies([{ ...monthly, burst: burst + 1 }])).toThrow(
        /burst 6949999424955 × \(period 2592000000 ms \/ 2000000\)/,
      );
    });
  });

  // Regression: a burst above 999,999,999,999,999 compiled where T is one tick (1000 per second: ticks of 1 ms), and
  // RateLimit's r, up to the burst, is an RFC 9651 Integer: every admitted response threw, a 500 for every request.
  it("refuses a burst above 999,999,999,999,999, which r would send; takes that burst, and r serializes", async () => {
    const policy = { name: "p", quota: 1_000, window: 1, burst: 1e15 };
    expect(() => compilePolicies([policy])).toThrow(TypeError);
    expect(() => compilePolicies([policy])).toThrow(/burst must be at most 999999999999999.*RFC 9651/);
    const limiter = createRateLimiter({ policies: [{ ...policy, burst: 999_999_999_999_999 }] });
    expect(rateLimitHeaders(await limiter.check("k", 0))).toEqual({
      "ratelimit-policy": '"p";q=1000;w=1',
      ratelimit: '"p";r=999999999999998;t=1',
    });
  });

  it("takes a quota of 999,999,999,999,999, and its headers serialize", async () => {
    const policy = { name: "p", quota: 999_999_999_999_999, window: 1, burst: 1 };
    const limiter = createRateLimiter({ policies: [policy] });
    expect(() => rateLimit({ limiter })).not.toThrow();
    const admitted = await limiter.check("k", 0);
    expect(admitted.allowed).toBe(true);
    expect(rateLimitHeaders(admitted)).toEqual({
      "ratelimit-policy": '"p";q=999999999999999;w=1',
      ratelimit: '"p";r=0;t=1',
    });
    const refused = await limiter.check("k", 0);
    expect(refused.allowed).toBe(false);
    expect(rateLimitHeaders(refused)).toEqual({
      "ratelimit-policy": '"p";q=999999999999999;w=1',
      ratelimit: '"p";r=0;t=1',
      "retry-after": "1",
    });
  });
});
