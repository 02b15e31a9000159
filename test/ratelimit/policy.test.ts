import { describe, expect, it } from "vitest";
import { compilePolicies, createRateLimiter, rateLimit, rateLimitHeaders } from "../../src/ratelimit/index";

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
