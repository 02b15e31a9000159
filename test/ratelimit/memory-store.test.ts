import { describe, expect, it } from "vitest";
import { compilePolicies, createMemoryStore } from "../../src/ratelimit/index";
import { storeContract } from "./store-contract";

storeContract("memory", () => ({ store: createMemoryStore() }));

describe("createMemoryStore bounds", () => {
  const set = compilePolicies([{ name: "p", quota: 1, window: 10 }]);

  it("evicts a key whose allowance is full again before any key that still holds state", async () => {
    const store = createMemoryStore({ maxKeys: 2 });
    await store.check("old", set, 0); // full again at 10 000
    await store.check("live", set, 9_000); // full again at 19 000
    await store.check("new", set, 10_000);
    expect(store.size).toBe(2);
    expect((await store.check("live", set, 10_000)).allowed).toBe(false); // kept its state
  });

  it("evicts the least recently admitted key when every key holds state", async () => {
    const store = createMemoryStore({ maxKeys: 2 });
    await store.check("a", set, 0);
    await store.check("b", set, 1);
    await store.check("c", set, 2);
    expect(store.size).toBe(2);
    expect((await store.check("a", set, 3)).allowed).toBe(true); // forgotten: starts afresh
    expect((await store.check("c", set, 3)).allowed).toBe(false);
  });

  it("prefers any of the oldest keys without state over the least recently admitted one", async () => {
    const store = createMemoryStore({ maxKeys: 3 });
    await store.check("live-1", set, 5_000); // full again at 15 000
    await store.check("idle", set, 0); // full again at 10 000
    await store.check("live-2", set, 9_000);
    await store.check("new", set, 12_000);
    expect(store.size).toBe(3);
    expect((await store.check("live-1", set, 12_000)).allowed).toBe(false);
    expect((await store.check("live-2", set, 12_000)).allowed).toBe(false);
  });

  it("gives a recently admitted key a second chance before evicting it", async () => {
    const store = createMemoryStore({ maxKeys: 2 });
    await store.check("a", set, 0);
    await store.check("b", set, 1);
    await store.check("a", set, 10_000); // admitted again: marked used
    await store.check("c", set, 10_001); // b (full again at 10 001) holds no state: dropped
    await store.check("d", set, 10_002); // a used → moved back; c is evicted
    expect((await store.check("a", set, 10_003)).allowed).toBe(false);
    expect((await store.check("d", set, 10_003)).allowed).toBe(false);
    expect((await store.check("c", set, 10_003)).allowed).toBe(true); // evicted: starts afresh
  });

  it("never holds more than maxKeys", async () => {
    const store = createMemoryStore({ maxKeys: 10 });
    for (let i = 0; i < 1_000; i++) await store.check(`k${i}`, set, 0);
    expect(store.size).toBe(10);
    store.clear();
    expect(store.size).toBe(0);
  });

  it("throws TypeError on a bad bound", () => {
    expect(() => createMemoryStore({ maxKeys: 0 })).toThrow(TypeError);
  });
});
