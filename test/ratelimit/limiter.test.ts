import { describe, expect, it } from "vitest";
import { createEndpointRateLimiter } from "../../src/ratelimit/endpoint-limiter";
import { createRateLimiter } from "../../src/ratelimit/index";

const perSecond = () => createRateLimiter({ policies: [{ name: "p", quota: 1, window: 1, burst: 1 }] });

describe("createRateLimiter check(key, nowMs)", () => {
  // Regression: only Number.isFinite was checked, and past 2^53 `now + T` rounds back to `now`: at 1e300 every request
  // was admitted (10 of 10 at one instant under 1 per second). Exact integer arithmetic holds below 2^53 only.
  describe("refuses a nowMs outside the safe-integer range with a TypeError naming it", () => {
    it.each([
      ["1e300", 1e300],
      ["2^53 + 2", 2 ** 53 + 2],
      ["2^53", 2 ** 53],
      ["-(2^53 + 2)", -(2 ** 53 + 2)],
      ["NaN", Number.NaN],
      ["Infinity", Number.POSITIVE_INFINITY],
      ["a numeric string", "5"],
    ])("%s", async (_what, nowMs) => {
      const limiter = perSecond();
      const check = limiter.check("k", nowMs as number);
      await expect(check).rejects.toBeInstanceOf(TypeError);
      await expect(check).rejects.toThrow(/nowMs/);
    });
  });

  it.each([
    ["MAX_SAFE_INTEGER − 2000", Number.MAX_SAFE_INTEGER - 2_000],
    ["−MAX_SAFE_INTEGER", -Number.MAX_SAFE_INTEGER],
    ["a fraction of a ms, rounded down", 1_700_000_000_000.75],
  ])("takes a nowMs within it as before: %s", async (_what, start) => {
    const limiter = perSecond();
    expect((await limiter.check("k", start)).allowed).toBe(true);
    const refused = await limiter.check("k", start);
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfterMs).toBe(1_000);
    expect((await limiter.check("k", start + 999)).allowed).toBe(false);
    expect((await limiter.check("k", start + 1_000)).allowed).toBe(true);
  });
});

describe("createEndpointRateLimiter acquire(endpointId, perSecond, nowMs)", () => {
  it.each([1e300, 2 ** 53 + 2, Number.NaN])("refuses nowMs %s with a TypeError naming it", async (nowMs) => {
    const pacer = createEndpointRateLimiter();
    await expect(pacer.acquire("ep", 1, nowMs)).rejects.toThrow(/nowMs/);
    await expect(pacer.acquire("ep", 1, nowMs)).rejects.toBeInstanceOf(TypeError);
  });

  it("takes MAX_SAFE_INTEGER − 2000 as before", async () => {
    const pacer = createEndpointRateLimiter();
    const start = Number.MAX_SAFE_INTEGER - 2_000;
    expect(await pacer.acquire("ep", 1, start)).toEqual({ allowed: true });
    expect(await pacer.acquire("ep", 1, start)).toEqual({ allowed: false, retryAtMs: start + 1_000 });
  });
});
