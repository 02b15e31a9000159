import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isThenable } from "../../src/http/thenable";
import { type BeginResult, MemoryIdempotencyStore, type StoredResponse } from "../../src/idempotency";
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

// Regression: a clock reading NaN made every lease look expired (NaN compares false), so every begin acquired and the
// handler ran for each retry, and a 409 got `Retry-After: NaN`.
describe("MemoryIdempotencyStore refuses a clock that is not a finite number", () => {
  const response = { status: 201, headers: {}, body: new Uint8Array([1]) };
  const readings = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, "1700000000000"];

  it("at construction", () => {
    for (const reading of readings) {
      expect(() => new MemoryIdempotencyStore({ now: () => reading as number })).toThrow(TypeError);
    }
    expect(() => new MemoryIdempotencyStore({ now: Date.now() as never })).toThrow(/now/);
  });

  it("in begin, complete and release, and leaves the record as it was", () => {
    for (const reading of readings) {
      let now = 1_700_000_000_000;
      const store = new MemoryIdempotencyStore({ now: () => now });
      const first = store.begin("k", "f", 1000);
      if (first.kind !== "acquired") throw new Error(first.kind);
      now = reading as number;
      expect(() => store.begin("k", "f", 1000)).toThrow(/now\(\)/);
      expect(() => store.begin("other", "f", 1000)).toThrow(TypeError);
      expect(() => store.complete("k", first.leaseToken, response, 5000)).toThrow(TypeError);
      expect(() => store.release("k", first.leaseToken)).toThrow(TypeError);
      now = 1_700_000_000_000;
      expect(store.begin("k", "f", 1000)).toMatchObject({ kind: "in-progress", retryAfterMs: 1000 });
      expect(store.size).toBe(1);
    }
  });
});

// The store written plainly: an array in write order, searched entry by entry. The real store keeps a Map and a list
// and hands an evicted record to the write that evicted it; this property checks it answers as the array does.
interface ModelEntry {
  key: string;
  fingerprint: string;
  expiresAt: number;
  state: string | StoredResponse;
}

class ModelStore {
  readonly entries: ModelEntry[] = [];
  #tokens = 0;
  constructor(readonly maxEntries: number) {}

  begin(key: string, fingerprint: string, leaseMs: number, now: number): BeginResult {
    const at = this.entries.findIndex((entry) => entry.key === key);
    const found = this.entries[at];
    if (found !== undefined) {
      if (found.expiresAt > now) {
        return typeof found.state === "string"
          ? { kind: "in-progress", fingerprint: found.fingerprint, retryAfterMs: found.expiresAt - now }
          : { kind: "completed", fingerprint: found.fingerprint, response: found.state };
      }
      this.entries.splice(at, 1);
    }
    // Up to two expired records at the old end go with each write; then the bound.
    for (let i = 0; i < 2 && (this.entries[0]?.expiresAt ?? Number.POSITIVE_INFINITY) <= now; i++) this.entries.shift();
    if (this.entries.length >= this.maxEntries) this.entries.shift();
    const leaseToken = `model-${++this.#tokens}`;
    this.entries.push({ key, fingerprint, expiresAt: now + leaseMs, state: leaseToken });
    return { kind: "acquired", leaseToken };
  }

  complete(key: string, token: string, response: StoredResponse, ttlMs: number, now: number): boolean {
    const at = this.#held(key, token, now);
    const entry = this.entries[at];
    if (entry === undefined) return false;
    this.entries.splice(at, 1);
    this.entries.push({ ...entry, state: response, expiresAt: now + ttlMs });
    return true;
  }

  release(key: string, token: string, now: number): boolean {
    const at = this.#held(key, token, now);
    if (at < 0) return false;
    this.entries.splice(at, 1);
    return true;
  }

  #held(key: string, token: string, now: number): number {
    return this.entries.findIndex((entry) => entry.key === key && entry.state === token && entry.expiresAt > now);
  }
}

type StoreCommand =
  | { op: "begin"; key: number; fingerprint: number; leaseMs: number }
  | { op: "complete"; key: number; token: number; ttlMs: number }
  | { op: "release"; key: number; token: number }
  | { op: "advance"; ms: number };

const storeCommand: fc.Arbitrary<StoreCommand> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant("begin" as const),
      key: fc.nat(5),
      fingerprint: fc.nat(1),
      leaseMs: fc.integer({ min: 1, max: 3000 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("complete" as const),
      key: fc.nat(5),
      token: fc.nat(),
      ttlMs: fc.integer({ min: 1, max: 5000 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("release" as const), key: fc.nat(5), token: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: 2000 }) }) },
);

describe("MemoryIdempotencyStore against a plain model", () => {
  it("answers every operation as an array in write order does, whatever the bound and interleaving", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.array(storeCommand, { maxLength: 60 }), (maxEntries, commands) => {
        const clock = fakeClock();
        const store = new MemoryIdempotencyStore({ maxEntries, now: clock.now });
        const model = new ModelStore(maxEntries);
        // The n-th token each side issued: a command names a token by its place, so a stale one is tried too.
        const tokens: { store: string; model: string }[] = [];
        let responses = 0;
        for (const command of commands) {
          const now = clock.now();
          if (command.op === "advance") {
            clock.advance(command.ms);
          } else if (command.op === "begin") {
            const key = `k${command.key}`;
            const fingerprint = `f${command.fingerprint}`;
            const got = store.begin(key, fingerprint, command.leaseMs);
            const want = model.begin(key, fingerprint, command.leaseMs, now);
            if (got.kind === "acquired" && want.kind === "acquired") {
              tokens.push({ store: got.leaseToken, model: want.leaseToken });
            } else {
              expect(got).toEqual(want);
              // The very response stored for this key, not one a reused record held for another.
              if (got.kind === "completed" && want.kind === "completed") expect(got.response).toBe(want.response);
            }
            expect(got.kind).toBe(want.kind);
          } else if (tokens.length > 0) {
            const key = `k${command.key}`;
            const token = tokens[command.token % tokens.length] as { store: string; model: string };
            if (command.op === "complete") {
              const response = { status: 200, headers: {}, body: new Uint8Array([++responses % 256]) };
              expect(store.complete(key, token.store, response, command.ttlMs)).toBe(
                model.complete(key, token.model, response, command.ttlMs, now),
              );
            } else {
              expect(store.release(key, token.store)).toBe(model.release(key, token.model, now));
            }
          }
          expect(store.size).toBe(model.entries.length);
        }
      }),
      { numRuns: 500 },
    );
  });
});
