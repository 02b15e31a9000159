import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { isThenable } from "../../src/http/thenable";
import { type BeginResult, IdempotencyError, MemoryIdempotencyStore, type StoredResponse } from "../../src/idempotency";
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

  function completeNew(store: MemoryIdempotencyStore, key: string): void {
    const begun = store.begin(key, "f", 1000);
    if (begun.kind !== "acquired") throw new Error(begun.kind);
    store.complete(key, begun.leaseToken, response, 5000);
  }

  it("never holds more than maxEntries completed records, evicting the least recently completed", () => {
    const store = new MemoryIdempotencyStore({ maxEntries: 3, now: fakeClock().now });
    for (const k of ["a", "b", "c"]) completeNew(store, k);
    completeNew(store, "d");
    expect(store.size).toBe(3);
    expect(store.begin("b", "f", 1000).kind).toBe("completed");
    expect(store.begin("a", "f", 1000).kind).toBe("acquired");
    expect(store.size).toBe(3);
  });

  // Regression: at the bound the oldest record went, lease or not, so a retry of a request still in flight acquired
  // its key and ran the handler a second time beside the first.
  it("never evicts a lease for maxEntries: requests in flight pass the bound", () => {
    const store = new MemoryIdempotencyStore({ maxEntries: 3, now: fakeClock().now });
    completeNew(store, "done");
    for (const k of ["a", "b", "c"]) store.begin(k, "f", 1000);
    expect(store.begin("done", "f", 1000).kind).toBe("acquired");
    expect(store.size).toBe(4);
    for (const k of ["a", "b", "c"]) expect(store.begin(k, "f", 1000).kind).toBe("in-progress");
  });

  it("evicts in the order records completed, not the order they began", async () => {
    const store = new MemoryIdempotencyStore({ maxEntries: 2, now: fakeClock().now });
    const a = await store.begin("a", "f", 1000);
    const b = await store.begin("b", "f", 1000);
    if (a.kind !== "acquired" || b.kind !== "acquired") throw new Error("a and b were acquired");
    await store.complete("b", b.leaseToken, response, 5000);
    await store.complete("a", a.leaseToken, response, 5000);
    await store.begin("c", "f", 1000);
    expect((await store.begin("a", "f", 1000)).kind).toBe("completed");
    expect((await store.begin("b", "f", 1000)).kind).toBe("acquired");
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

// Regression: the default clock was Date.now, so a step of the wall clock (an NTP correction) ended every lease at
// once, and a retry ran the handler beside the request still running.
it("MemoryIdempotencyStore's default clock does not follow the wall clock's steps", () => {
  let wall = 1_700_000_000_000;
  const wallClock = vi.spyOn(Date, "now").mockImplementation(() => wall);
  try {
    const store = new MemoryIdempotencyStore();
    expect(store.begin("k", "f", 60_000).kind).toBe("acquired");
    wall += 2 * 3_600_000;
    expect(store.begin("k", "f", 60_000).kind).toBe("in-progress");
  } finally {
    wallClock.mockRestore();
  }
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

// The store written plainly: an array in write order, searched entry by entry. The real store keeps a Map and two lists
// (leases, completed records) and hands an evicted record to the write that evicted it; this property checks it answers
// as the array does.
interface ModelEntry {
  key: string;
  fingerprint: string;
  expiresAt: number;
  state: string | StoredResponse;
}

// What an entry counts toward maxBytes: keys and fingerprints are ASCII here, and no header field is kept.
const modelBytes = (entry: ModelEntry) =>
  entry.key.length + entry.fingerprint.length + (typeof entry.state === "string" ? 0 : entry.state.body.byteLength);

class ModelStore {
  readonly entries: ModelEntry[] = [];
  #tokens = 0;
  constructor(
    readonly maxEntries: number,
    readonly maxBytes: number,
  ) {}

  get bytes(): number {
    return this.entries.reduce((sum, entry) => sum + modelBytes(entry), 0);
  }

  get completedBytes(): number {
    return this.entries.reduce((sum, e) => sum + (typeof e.state === "string" ? 0 : modelBytes(e)), 0);
  }

  get leases(): ModelEntry[] {
    return this.entries.filter((entry) => typeof entry.state === "string");
  }

  get completed(): ModelEntry[] {
    return this.entries.filter((entry) => typeof entry.state !== "string");
  }

  #drop(entry: ModelEntry): number {
    this.entries.splice(this.entries.indexOf(entry), 1);
    return modelBytes(entry);
  }

  // Expired leases at the old end of the leases, then completed entries from the least recently completed.
  #free(excess: number, now: number): number {
    for (const lease of this.leases) {
      if (excess <= 0 || lease.expiresAt > now) break;
      excess -= this.#drop(lease);
    }
    for (const entry of this.completed) {
      if (excess <= 0) break;
      excess -= this.#drop(entry);
    }
    return excess;
  }

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
    // Up to two expired records at the old end of the leases and of the completed go with each write; then the bound,
    // which evicts the least recently completed entry and never a lease.
    for (const list of [this.leases, this.completed]) {
      for (const entry of list.slice(0, 2)) {
        if (entry.expiresAt > now) break;
        this.#drop(entry);
      }
    }
    const oldestCompleted = this.completed[0];
    if (this.entries.length >= this.maxEntries && oldestCompleted !== undefined) this.#drop(oldestCompleted);
    const leaseToken = `model-${++this.#tokens}`;
    const entry = { key, fingerprint, expiresAt: now + leaseMs, state: leaseToken };
    this.#free(this.bytes + modelBytes(entry) - this.maxBytes, now);
    this.entries.push(entry);
    return { kind: "acquired", leaseToken };
  }

  complete(key: string, token: string, response: StoredResponse, ttlMs: number, now: number): boolean {
    const at = this.#held(key, token, now);
    const entry = this.entries[at];
    if (entry === undefined) return false;
    const done = { ...entry, state: response, expiresAt: now + ttlMs };
    const bytes = modelBytes(done);
    if (bytes > this.maxBytes) throw new IdempotencyError("idempotency_response_too_large", "model");
    let excess = this.bytes - modelBytes(entry) + bytes - this.maxBytes;
    if (excess > this.completedBytes) {
      // Every expired lease, wherever it is, before refusing.
      for (const lease of this.leases) {
        if (excess > 0 && lease.expiresAt <= now) excess -= this.#drop(lease);
      }
      if (excess > this.completedBytes) throw new IdempotencyError("idempotency_store_full", "model");
    }
    this.#free(excess, now);
    this.entries.splice(this.entries.indexOf(entry), 1);
    this.entries.push(done);
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
  | { op: "complete"; key: number; token: number; ttlMs: number; size: number }
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
      size: fc.nat(40),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("release" as const), key: fc.nat(5), token: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: 2000 }) }) },
);

// A returned value, or the code of what was thrown.
function outcome(run: () => boolean): boolean | { code: unknown } {
  try {
    return run();
  } catch (error) {
    return { code: (error as { code?: unknown }).code };
  }
}

describe("MemoryIdempotencyStore against a plain model", () => {
  it("answers every operation as an array in write order does, whatever the bounds and interleaving", () => {
    const maxBytes = fc.oneof(fc.constant(Number.POSITIVE_INFINITY), fc.integer({ min: 1, max: 120 }));
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        maxBytes,
        fc.array(storeCommand, { maxLength: 60 }),
        (maxEntries, maxBytes, commands) => {
          const clock = fakeClock();
          const store = new MemoryIdempotencyStore({ maxEntries, maxBytes, now: clock.now });
          const model = new ModelStore(maxEntries, maxBytes);
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
                // The very response stored for this key, not one a reused record held for another: its headers object
                // (kept as given); the body is a copy per replay, its bytes compared above.
                if (got.kind === "completed" && want.kind === "completed") {
                  expect(got.response.headers).toBe(want.response.headers);
                }
              }
              expect(got.kind).toBe(want.kind);
            } else if (tokens.length > 0) {
              const key = `k${command.key}`;
              const token = tokens[command.token % tokens.length] as { store: string; model: string };
              if (command.op === "complete") {
                const body = new Uint8Array(command.size).fill(++responses % 256);
                const response = { status: 200, headers: {}, body };
                expect(outcome(() => store.complete(key, token.store, response, command.ttlMs))).toEqual(
                  outcome(() => model.complete(key, token.model, response, command.ttlMs, now)),
                );
              } else {
                expect(store.release(key, token.store)).toBe(model.release(key, token.model, now));
              }
            }
            expect(store.size).toBe(model.entries.length);
            expect(store.bytes).toBe(model.bytes);
            // Past maxBytes only by leases, which are never evicted for bytes.
            expect(model.completedBytes === 0 || store.bytes <= maxBytes).toBe(true);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

// Regression: maxEntries bounded the number of records but not their size, so a handler answering large bodies under
// fresh keys (a client sending POSTs with new Idempotency-Keys) grew the heap without limit.
describe("MemoryIdempotencyStore maxBytes", () => {
  const bytes = (n: number): StoredResponse => ({ status: 201, headers: {}, body: new Uint8Array(n) });

  function complete(store: MemoryIdempotencyStore, key: string, response: StoredResponse): boolean {
    const begun = store.begin(key, "f", 1000);
    if (begun.kind !== "acquired") throw new Error(begun.kind);
    return store.complete(key, begun.leaseToken, response, 5000);
  }

  function codeOf(run: () => unknown): unknown {
    try {
      run();
    } catch (error) {
      return (error as { code?: unknown }).code;
    }
    return "no error";
  }

  it("counts the key and fingerprint by their length, the body's bytes and the kept header fields' octets", () => {
    const store = new MemoryIdempotencyStore({ now: fakeClock().now });
    const begun = store.begin("key-1", "fp", 1000);
    if (begun.kind !== "acquired") throw new Error(begun.kind);
    // A lease holds its key and fingerprint (visible ASCII and a digest: a character is a byte).
    expect(store.bytes).toBe(7);
    const response = {
      status: 201,
      headers: { "content-type": "text/plain", link: ["<a>", "<bc>"] },
      body: new Uint8Array(7),
    };
    store.complete("key-1", begun.leaseToken, response, 5000);
    expect(store.bytes).toBe(5 + 2 + 7 + "content-type".length + "text/plain".length + "link".length * 2 + 3 + 4);
    store.clear();
    expect(store.bytes).toBe(0);
  });

  it("never holds more than maxBytes of completed records under fresh keys, evicting the oldest first", () => {
    const store = new MemoryIdempotencyStore({ maxBytes: 64 * 1024, now: fakeClock().now });
    for (let i = 0; i < 1000; i++) {
      expect(complete(store, `key-${i}`, bytes(10_000))).toBe(true);
      expect(store.bytes).toBeLessThanOrEqual(64 * 1024);
    }
    // The newest are kept, the oldest evicted: the same write order maxEntries evicts in.
    expect(store.begin("key-999", "f", 1000).kind).toBe("completed");
    expect(store.begin("key-0", "f", 1000).kind).toBe("acquired");
  });

  it("defaults to 64 MiB", () => {
    const store = new MemoryIdempotencyStore({ now: fakeClock().now });
    for (let i = 0; i < 70; i++) complete(store, `k${i}`, bytes(2 ** 20));
    expect(store.bytes).toBeLessThanOrEqual(64 * 2 ** 20);
    expect(store.bytes).toBeGreaterThan(63 * 2 ** 20);
  });

  it("evicts a completed record in front of a lease, never the lease", () => {
    const store = new MemoryIdempotencyStore({ maxBytes: 200, now: fakeClock().now });
    const lease = store.begin("lease", "f", 1000);
    complete(store, "a", bytes(100));
    complete(store, "b", bytes(100));
    expect(store.begin("a", "f", 1000).kind).toBe("acquired");
    expect(store.begin("b", "f", 1000).kind).toBe("completed");
    expect(store.begin("lease", "f", 1000)).toMatchObject({ kind: "in-progress" });
    if (lease.kind !== "acquired") throw new Error(lease.kind);
    expect(store.complete("lease", lease.leaseToken, bytes(10), 5000)).toBe(true);
  });

  it("makes room for a new lease by evicting the oldest completed record", () => {
    const store = new MemoryIdempotencyStore({ maxBytes: 104, now: fakeClock().now });
    complete(store, "a", bytes(100));
    store.begin("b", "f", 1000);
    expect(store.bytes).toBe(104);
    store.begin("c", "f", 1000);
    expect(store.bytes).toBe(4);
    expect(store.begin("a", "f", 1000).kind).toBe("acquired");
  });

  it("drops expired leases to make room rather than refusing the response", () => {
    const clock = fakeClock();
    const store = new MemoryIdempotencyStore({ maxBytes: 100, now: clock.now });
    // 20 leases of 9 bytes: a lease is never refused for its bytes, only its response is.
    for (let i = 10; i < 30; i++) store.begin(`lease-${i}`, "f", 100);
    clock.advance(200);
    expect(complete(store, "x", bytes(50))).toBe(true);
    expect(store.bytes).toBeLessThanOrEqual(100);
    expect(store.begin("x", "f", 1000).kind).toBe("completed");
  });

  // A response that can never fit is not stored: releasing the key would let a retry repeat the effect at once, so
  // the lease is left to run out, as after any store failure, and the middleware reports the error.
  it("throws idempotency_response_too_large for a response larger than maxBytes, evicting nothing", () => {
    const store = new MemoryIdempotencyStore({ maxBytes: 1000, now: fakeClock().now });
    complete(store, "small", bytes(10));
    const begun = store.begin("big", "f", 1000);
    if (begun.kind !== "acquired") throw new Error(begun.kind);
    expect(codeOf(() => store.complete("big", begun.leaseToken, bytes(1000), 5000))).toBe(
      "idempotency_response_too_large",
    );
    expect(store.begin("big", "f", 1000)).toMatchObject({ kind: "in-progress" });
    expect(store.begin("small", "f", 1000).kind).toBe("completed");
    // Its lease still holds: a smaller answer could still be recorded under it.
    expect(store.complete("big", begun.leaseToken, bytes(10), 5000)).toBe(true);
  });

  it("throws idempotency_store_full when leases leave no room, evicting no completed record for nothing", () => {
    const store = new MemoryIdempotencyStore({ maxBytes: 100, now: fakeClock().now });
    complete(store, "done", bytes(20));
    // 25 bytes completed, 42 in leases: a response of 62 fits beside the leases only, not even with "done" evicted.
    for (let i = 0; i < 5; i++) store.begin(`lease-${i}`, "f", 1000);
    const begun = store.begin("x", "f", 1000);
    if (begun.kind !== "acquired") throw new Error(begun.kind);
    expect(store.bytes).toBe(67);
    expect(codeOf(() => store.complete("x", begun.leaseToken, bytes(60), 5000))).toBe("idempotency_store_full");
    expect(store.begin("done", "f", 1000).kind).toBe("completed");
    expect(store.begin("x", "f", 1000)).toMatchObject({ kind: "in-progress" });
    expect(store.begin("lease-0", "f", 1000)).toMatchObject({ kind: "in-progress" });
  });

  it("takes Infinity for no bound", () => {
    const store = new MemoryIdempotencyStore({ maxBytes: Number.POSITIVE_INFINITY, now: fakeClock().now });
    for (let i = 0; i < 5; i++) complete(store, `k${i}`, bytes(2 ** 20));
    expect(store.size).toBe(5);
    expect(store.bytes).toBeGreaterThan(5 * 2 ** 20);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.NEGATIVE_INFINITY, "1000"])("refuses maxBytes %s, naming it", (value) => {
    expect(() => new MemoryIdempotencyStore({ maxBytes: value as number })).toThrow(/maxBytes/);
    expect(() => new MemoryIdempotencyStore({ maxBytes: value as number })).toThrow(TypeError);
  });
});
