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

// Regression: a prefix with a lone surrogate made every check reject (every request a 500 under rateLimit), and the
// pacer took a store without `check`, failing every acquire; both are refused where the option is given.
describe("options refused at construction, naming the option", () => {
  const policies = [{ name: "p", quota: 1, window: 1 }];
  it.each([
    ["a prefix with a lone surrogate", "k\ud800"],
    ["a prefix that is not a string", 5],
  ])("createRateLimiter: %s", (_what, prefix) => {
    expect(() => createRateLimiter({ policies, prefix: prefix as string })).toThrow(
      /createRateLimiter: options\.prefix must be a string of well-formed UTF-16/,
    );
  });

  it.each([
    ["a prefix with a lone surrogate", { prefix: "\udc00ep:" }, /options\.prefix/],
    ["a store without check", { store: {} }, /options\.store/],
    ["options that are not an object", null, /options must be an object/],
  ])("createEndpointRateLimiter: %s", (_what, options, message) => {
    expect(() => createEndpointRateLimiter(options as never)).toThrow(message);
    expect(() => createEndpointRateLimiter(options as never)).toThrow(TypeError);
  });

  it("takes a well-formed prefix with a surrogate pair as before", async () => {
    const limiter = createRateLimiter({ policies, prefix: "\u{1F600}:" });
    expect((await limiter.check("k", 0)).allowed).toBe(true);
    const pacer = createEndpointRateLimiter({ prefix: "\u{1F600}:" });
    expect(await pacer.acquire("ep", 1, 0)).toEqual({ allowed: true });
  });
});
