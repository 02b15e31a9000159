import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compilePolicies, createMemoryStore, createRateLimiter } from "../../src/ratelimit/index";
import { storeContract } from "./store-contract";

storeContract("memory", () => ({ store: createMemoryStore() }));

// Regression: null crashed with "Cannot read properties of null" rather than naming what was wrong.
it("createMemoryStore refuses options that are not an object, naming them", () => {
  for (const options of [null, "big", 5]) {
    expect(() => createMemoryStore(options as never)).toThrow(/createMemoryStore: options must be an object/);
  }
});

describe("createMemoryStore bounds", () => {
  const set = compilePolicies([{ name: "p", quota: 1, window: 10 }]);

  // Regression: maxKeys bounded the number of keys, not their length: a key taken from a header the client chooses
  // (16 KB on Node) was held whole, so maxKeys such keys took 1.6 GB at the default 100,000.
  describe("maxKeyLength: a longer key is held by a 128-bit digest", () => {
    const long = (n: number, last: string) => `${"x".repeat(n - 1)}${last}`;

    it("holds at most maxKeyLength characters per key, and keeps long keys apart", async () => {
      const store = createMemoryStore({ maxKeyLength: 64 });
      for (const last of ["a", "b", "c"]) expect((await store.check(long(16_384, last), set, 0)).allowed).toBe(true);
      expect(store.keyChars).toBeLessThanOrEqual(3 * 64);
      for (const last of ["a", "b", "c"]) expect((await store.check(long(16_384, last), set, 0)).allowed).toBe(false);
      expect(store.size).toBe(3);
    });

    it("keeps a key of maxKeyLength characters as it is, and apart from any digest", async () => {
      const store = createMemoryStore({ maxKeyLength: 64 });
      expect((await store.check(long(64, "a"), set, 0)).allowed).toBe(true);
      expect(store.keyChars).toBe(64);
      expect((await store.check(long(65, "a"), set, 0)).allowed).toBe(true);
      expect((await store.check(long(64, "a"), set, 0)).allowed).toBe(false);
    });

    it("counts the characters of evicted keys out", async () => {
      const store = createMemoryStore({ maxKeys: 2, maxKeyLength: 64 });
      await store.check("aaaa", set, 0);
      await store.check(long(1_000, "b"), set, 1);
      await store.check("cc", set, 2); // evicts "aaaa", the least recently admitted
      expect(store.keyChars).toBe(33 + 2);
      store.clear();
      expect(store.keyChars).toBe(0);
    });

    it("defaults to 256 characters", async () => {
      const store = createMemoryStore();
      await store.check(long(256, "a"), set, 0);
      expect(store.keyChars).toBe(256);
      await store.check(long(10_000, "a"), set, 0);
      expect(store.keyChars).toBeLessThanOrEqual(512);
    });

    it("keeps random long keys apart (no digest collision)", () => {
      const store = createMemoryStore({ maxKeyLength: 1 });
      fc.assert(
        fc.property(
          fc.uniqueArray(fc.string({ minLength: 2, maxLength: 40 }), { minLength: 2, maxLength: 30 }),
          (keys) => {
            store.clear();
            for (const key of keys) expect(store.checkSync(key, set, 0).allowed).toBe(true);
            expect(store.size).toBe(keys.length);
          },
        ),
      );
    });

    it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, "64"])("refuses maxKeyLength %s", (maxKeyLength) => {
      expect(() => createMemoryStore({ maxKeyLength: maxKeyLength as number })).toThrow(
        /createMemoryStore: maxKeyLength must be a positive integer/,
      );
    });
  });

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

  // The second chance is capped, so finding a key to evict stays O(1): the documented cost is that a key admitted
  // moments ago can go, and it then starts with a full allowance.
  it("evicts the ninth key the hand reaches once eight have had their second chance, however recently admitted", () => {
    const hourly = compilePolicies([{ name: "h", quota: 2, window: 3_600 }]);
    const store = createMemoryStore({ maxKeys: 10 });
    let now = 0;
    for (let i = 0; i < 10; i++) store.checkSync(`k${i}`, hourly, now++); // k0 … k9, in that order
    for (let i = 0; i < 9; i++) store.checkSync(`k${i}`, hourly, now++); // k0 … k8 admitted again: used
    store.checkSync("new", hourly, now++); // k0 … k7 get their second chance; k8 goes
    // Held keys first: k8 coming back is a new key at a full store, which evicts another.
    expect(store.checkSync("k9", hourly, now).remaining).toEqual([0]); // least recently admitted, yet kept
    expect(store.checkSync("k0", hourly, now).allowed).toBe(false); // kept, its allowance spent
    expect(store.checkSync("k8", hourly, now).remaining).toEqual([1]); // evicted: a full allowance again
  });

  it("puts a new key behind every older key, also when the key it replaced was not the oldest", async () => {
    const store = createMemoryStore({ maxKeys: 3 });
    await store.check("a", set, 0);
    await store.check("b", set, 1);
    await store.check("c", set, 2);
    await store.check("a", set, 10_000); // admitted again: used
    await store.check("d", set, 10_001); // b holds no state: d takes its place, behind c
    await store.check("e", set, 10_001); // a gets its second chance; c, the oldest unused, goes (not d)
    expect((await store.check("d", set, 10_002)).allowed).toBe(false);
    expect((await store.check("c", set, 10_002)).allowed).toBe(true); // evicted: starts afresh
  });

  it("never holds more than maxKeys", async () => {
    const store = createMemoryStore({ maxKeys: 10 });
    for (let i = 0; i < 1_000; i++) await store.check(`k${i}`, set, 0);
    expect(store.size).toBe(10);
    store.clear();
    expect(store.size).toBe(0);
  });

  it("holds the keys a naive reference of its eviction policy holds, under any churn", () => {
    // The policy, written plainly: keys oldest admitted first; when full, the first key without state among the
    // next four goes, else the oldest not admitted since it was last passed over (up to eight second chances).
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.tuple(fc.nat(14), fc.oneof(fc.constant(0), fc.nat(1_500), fc.nat(12_000))), { maxLength: 200 }),
        (maxKeys, steps) => {
          const store = createMemoryStore({ maxKeys });
          const order: { key: string; used: boolean; expiresAt: number }[] = [];
          let now = 0;
          for (const [k, advance] of steps) {
            now += advance;
            const key = `k${k}`;
            const held = order.find((entry) => entry.key === key);
            const outcome = store.checkSync(key, set, now);
            // Quota 1, no burst: a held key is admitted once its allowance is full again; a forgotten one afresh.
            expect(outcome.allowed, `${key} at ${now}`).toBe(held === undefined || held.expiresAt <= now);
            if (held !== undefined) {
              if (outcome.allowed) {
                held.used = true;
                held.expiresAt = now + 10_000;
              }
            } else if (outcome.allowed) {
              if (order.length >= maxKeys) {
                const stateless = order.slice(0, 4).findIndex((entry) => entry.expiresAt <= now);
                if (stateless >= 0) order.splice(stateless, 1);
                else {
                  for (let chance = 0; chance < 8 && (order[0] as { used: boolean }).used; chance++) {
                    const passed = order.shift() as { key: string; used: boolean; expiresAt: number };
                    passed.used = false;
                    order.push(passed);
                  }
                  order.shift();
                }
              }
              order.push({ key, used: false, expiresAt: now + 10_000 });
            }
            expect(store.size).toBe(order.length);
          }
        },
      ),
    );
  });

  it("a limiter on it rejects a key with a lone surrogate (the store's TypeError), not throws", async () => {
    const limiter = createRateLimiter({ policies: [{ name: "p", quota: 1, window: 10 }], store: createMemoryStore() });
    const decision = limiter.check("k\ud800", 0);
    await expect(decision).rejects.toBeInstanceOf(TypeError);
  });

  it("throws TypeError on a bad bound", () => {
    expect(() => createMemoryStore({ maxKeys: 0 })).toThrow(TypeError);
  });
});
