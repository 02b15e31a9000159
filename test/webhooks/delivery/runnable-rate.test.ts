import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createEndpointRateLimiter } from "../../../src/ratelimit/endpoint-limiter";
import { MAX_RATE_LIMIT, MIN_RATE_LIMIT } from "../../../src/webhooks/delivery/endpoint-schema";
import { runnableRate } from "../../../src/webhooks/delivery/runnable-rate";

describe("runnableRate", () => {
  it("keeps every rate the endpoint API accepts", () => {
    for (const rate of [MIN_RATE_LIMIT, 1 / 3, 1, 2.5, 1_000, MAX_RATE_LIMIT]) expect(runnableRate(rate)).toBe(rate);
  });

  it("reads a rate below the range, or one that cannot be read, as the slowest, and one above it as the fastest", () => {
    for (const rate of [1e-300, Number.MIN_VALUE, 0, -0, -1, Number.NaN, Number.NEGATIVE_INFINITY]) {
      expect(runnableRate(rate)).toBe(MIN_RATE_LIMIT);
    }
    for (const rate of [MAX_RATE_LIMIT + 1, 1e9, Number.POSITIVE_INFINITY])
      expect(runnableRate(rate)).toBe(MAX_RATE_LIMIT);
  });

  it("gives a rate the pacer runs, whatever number was stored (regression: 1e-300 was refused on every admission)", async () => {
    const pacer = createEndpointRateLimiter();
    await fc.assert(
      fc.asyncProperty(fc.double(), async (stored) => {
        const permit = await pacer.acquire("we_1", runnableRate(stored), 1_700_000_000_000);
        expect(typeof permit.allowed).toBe("boolean");
      }),
    );
  });
});
