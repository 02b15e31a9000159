import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createEndpointRateLimiter, createMemoryStore, createRateLimiter } from "../../src/ratelimit/index";

describe("createEndpointRateLimiter", () => {
  it("spaces deliveries one emission interval apart by default (burst 1)", async () => {
    const pacer = createEndpointRateLimiter();
    expect(await pacer.acquire("ep", 4, 1_000)).toEqual({ allowed: true });
    expect(await pacer.acquire("ep", 4, 1_000)).toEqual({ allowed: false, retryAtMs: 1_250 });
    expect(await pacer.acquire("ep", 4, 1_249)).toEqual({ allowed: false, retryAtMs: 1_250 });
    expect(await pacer.acquire("ep", 4, 1_250)).toEqual({ allowed: true });
  });

  it("keeps endpoints apart", async () => {
    const pacer = createEndpointRateLimiter();
    expect(await pacer.acquire("a", 1, 0)).toEqual({ allowed: true });
    expect(await pacer.acquire("b", 1, 0)).toEqual({ allowed: true });
    expect(await pacer.acquire("a", 1, 0)).toEqual({ allowed: false, retryAtMs: 1_000 });
  });

  it("admits a burst back to back, then paces", async () => {
    const pacer = createEndpointRateLimiter({ burst: 3, store: createMemoryStore() });
    for (let i = 0; i < 3; i++) expect(await pacer.acquire("ep", 10, 0)).toEqual({ allowed: true });
    expect(await pacer.acquire("ep", 10, 0)).toEqual({ allowed: false, retryAtMs: 100 });
  });

  it("handles fractional rates exactly: 2.5 per second is one every 400 ms", async () => {
    const pacer = createEndpointRateLimiter();
    let now = 0;
    const admitted: number[] = [];
    while (admitted.length < 6) {
      const slot = await pacer.acquire("ep", 2.5, now);
      if (slot.allowed) admitted.push(now);
      else now = slot.retryAtMs;
    }
    expect(admitted).toEqual([0, 400, 800, 1_200, 1_600, 2_000]);
  });

  it("handles rates below one per second exactly: 1/3 per second is one every 3000 ms", async () => {
    const pacer = createEndpointRateLimiter();
    expect(await pacer.acquire("ep", 1 / 3, 0)).toEqual({ allowed: true });
    expect(await pacer.acquire("ep", 1 / 3, 0)).toEqual({ allowed: false, retryAtMs: 3_000 });
  });

  // Regression: the rate was scaled by powers of 1000 up to 1e6 only, so 1 per day came out as one per 83,333 s,
  // 1 per week one per 500,000 s and 1 per 30 days one per 1,000,000 s.
  it.each([
    ["1 per day", 86_400],
    ["1 per week", 604_800],
    ["1 per 30 days", 2_592_000],
    ["1 per 365 days", 31_536_000],
  ])("spaces slow rates exactly: %s", async (_case, seconds) => {
    const pacer = createEndpointRateLimiter();
    const now = 1_763_000_000_000;
    expect(await pacer.acquire("ep", 1 / seconds, now)).toEqual({ allowed: true });
    expect(await pacer.acquire("ep", 1 / seconds, now)).toEqual({ allowed: false, retryAtMs: now + seconds * 1000 });
    expect((await pacer.acquire("ep", 1 / seconds, now + seconds * 1000 - 1)).allowed).toBe(false);
    expect(await pacer.acquire("ep", 1 / seconds, now + seconds * 1000)).toEqual({ allowed: true });
  });

  it("spaces any rate of n per s seconds by the exact interval, rounded up to the ms", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 1_000 }), fc.integer({ min: 1, max: 40_000_000 }), async (n, s) => {
        const pacer = createEndpointRateLimiter();
        expect(await pacer.acquire("ep", n / s, 0)).toEqual({ allowed: true });
        expect(await pacer.acquire("ep", n / s, 0)).toEqual({ allowed: false, retryAtMs: Math.ceil((1000 * s) / n) });
      }),
      { numRuns: 500 },
    );
  });

  // Regression: a changed rate started the endpoint afresh, so each change let a delivery through at once.
  it("carries an endpoint's pacing across a change of its rate, and its retryAtMs holds", async () => {
    const pacer = createEndpointRateLimiter();
    expect(await pacer.acquire("ep", 1, 0)).toEqual({ allowed: true });
    expect(await pacer.acquire("ep", 2, 0)).toEqual({ allowed: false, retryAtMs: 1_000 });
    expect(await pacer.acquire("ep", 2, 999)).toEqual({ allowed: false, retryAtMs: 1_000 });
    expect(await pacer.acquire("ep", 2, 1_000)).toEqual({ allowed: true });
  });

  // Regression: the pacer's default prefix "rl:endpoint:" began with the limiter's default "rl:", so on one store (the
  // delivery queue's PostgreSQL table, one Redis) a client whose key was "endpoint:ep_1" shared ep_1's row; its
  // policy's state replaced the pacer's (another set id starts afresh), and ep_1 was sent a delivery early each time.
  it("keeps its keys apart from a rate limiter's keys on a shared store, with both prefixes left at their defaults", async () => {
    const store = createMemoryStore();
    const pacer = createEndpointRateLimiter({ store });
    const api = createRateLimiter({ policies: [{ name: "p", quota: 100, window: 60 }], store });
    expect(await pacer.acquire("ep_1", 1, 0)).toEqual({ allowed: true });
    expect((await api.check("endpoint:ep_1", 0)).allowed).toBe(true); // a key the client chose (an API key header)
    expect(await pacer.acquire("ep_1", 1, 0)).toEqual({ allowed: false, retryAtMs: 1_000 });
  });

  // Regression: a bad burst was accepted here, and then every acquire rejected.
  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, "2"])(
    "throws TypeError at construction on burst %s",
    (burst) => {
      expect(() => createEndpointRateLimiter({ burst: burst as number })).toThrow(TypeError);
      expect(() => createEndpointRateLimiter({ burst: burst as number })).toThrow(/burst/);
    },
  );

  it("throws TypeError on a rate that is not a positive number", async () => {
    const pacer = createEndpointRateLimiter();
    await expect(pacer.acquire("ep", 0, 0)).rejects.toBeInstanceOf(TypeError);
    await expect(pacer.acquire("ep", Number.NaN, 0)).rejects.toBeInstanceOf(TypeError);
    await expect(pacer.acquire("ep", -1, 0)).rejects.toBeInstanceOf(TypeError);
  });
});
