import { describe, expect, it } from "vitest";
import { createEndpointRateLimiter, createMemoryStore } from "../../src/ratelimit/index";

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

  it("handles rates below one per second: 1/3 per second is one every 3000 ms (rounded up to the ms)", async () => {
    const pacer = createEndpointRateLimiter();
    expect(await pacer.acquire("ep", 1 / 3, 0)).toEqual({ allowed: true });
    const slot = await pacer.acquire("ep", 1 / 3, 0);
    expect(slot.allowed).toBe(false);
    if (!slot.allowed) expect(Math.abs(slot.retryAtMs - 3_000)).toBeLessThanOrEqual(1);
  });

  it("starts afresh when an endpoint's rate changes", async () => {
    const pacer = createEndpointRateLimiter();
    expect(await pacer.acquire("ep", 1, 0)).toEqual({ allowed: true });
    expect(await pacer.acquire("ep", 2, 0)).toEqual({ allowed: true });
  });

  it("throws TypeError on a rate that is not a positive number", async () => {
    const pacer = createEndpointRateLimiter();
    await expect(pacer.acquire("ep", 0, 0)).rejects.toBeInstanceOf(TypeError);
    await expect(pacer.acquire("ep", Number.NaN, 0)).rejects.toBeInstanceOf(TypeError);
    await expect(pacer.acquire("ep", -1, 0)).rejects.toBeInstanceOf(TypeError);
  });
});
