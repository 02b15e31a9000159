import { describe, expect, it } from "vitest";
import { isThenable } from "../../src/http/thenable";
import { MemoryIdempotencyStore } from "../../src/idempotency";
import { describeStoreContract } from "./store-contract";

function fakeClock(start = 1_700_000_000_000) {
  let now = start;
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describeStoreContract(
  "memory",
  async () => {
    const clock = fakeClock();
    return { store: new MemoryIdempotencyStore({ now: clock.now }), advance: async (ms) => clock.advance(ms) };
  },
  { leaseMs: 30_000, ttlMs: 86_400_000, exactClock: true },
);

describe("MemoryIdempotencyStore answers at once", () => {
  const response = { status: 201, headers: {}, body: new Uint8Array([1]) };

  it("returns plain values, never promises, from begin, complete and release", () => {
    const store = new MemoryIdempotencyStore({ now: fakeClock().now });
    const first = store.begin("a", "f", 1000);
    expect(isThenable(first)).toBe(false);
    expect(first.kind).toBe("acquired");
    if (first.kind !== "acquired") return;
    expect(store.begin("a", "f", 1000)).toMatchObject({ kind: "in-progress", retryAfterMs: 1000 });
    expect(store.complete("a", first.leaseToken, response, 5000)).toBe(true);
    expect(store.begin("a", "f", 1000)).toMatchObject({ kind: "completed", response });
    expect(store.complete("a", first.leaseToken, response, 5000)).toBe(false);
    const second = store.begin("b", "f", 1000);
    if (second.kind !== "acquired") throw new Error("b was acquired");
    expect(store.release("b", "wrong-token")).toBe(false);
    expect(store.release("b", second.leaseToken)).toBe(true);
    expect(store.begin("b", "f", 1000).kind).toBe("acquired");
  });
});

describe("MemoryIdempotencyStore bounds", () => {
  const response = { status: 201, headers: {}, body: new Uint8Array([1]) };

  it("never holds more than maxEntries, evicting the least recently written", async () => {
    const store = new MemoryIdempotencyStore({ maxEntries: 3, now: fakeClock().now });
    for (const k of ["a", "b", "c"]) await store.begin(k, "f", 1000);
    const c = await store.begin("d", "f", 1000);
    expect(c.kind).toBe("acquired");
    expect(store.size).toBe(3);
    expect((await store.begin("a", "f", 1000)).kind).toBe("acquired");
    expect(store.size).toBe(3);
  });

  it("moves a completed record to the back of the eviction order", async () => {
    const store = new MemoryIdempotencyStore({ maxEntries: 2, now: fakeClock().now });
    const a = await store.begin("a", "f", 1000);
    await store.begin("b", "f", 1000);
    if (a.kind !== "acquired") throw new Error(a.kind);
    await store.complete("a", a.leaseToken, response, 5000);
    await store.begin("c", "f", 1000);
    expect((await store.begin("a", "f", 1000)).kind).toBe("completed");
  });

  it("drops expired records at the head as it writes, without a timer", async () => {
    const clock = fakeClock();
    const store = new MemoryIdempotencyStore({ maxEntries: 100, now: clock.now });
    for (let i = 0; i < 10; i++) await store.begin(`k${i}`, "f", 1000);
    clock.advance(2000);
    for (let i = 0; i < 5; i++) await store.begin(`n${i}`, "f", 1000);
    expect(store.size).toBe(5);
  });

  it("rejects a non-positive bound", () => {
    expect(() => new MemoryIdempotencyStore({ maxEntries: 0 })).toThrow(TypeError);
  });
});
