import { positiveInteger } from "../../options/number-option";
import { carryState } from "../carry-state";
import { type GcraOutcome, gcraCheck } from "../gcra";
import type { PolicySet } from "../policy";
import type { RateLimitStore } from "../store";
import { assertStoreKey, assertStoreNow } from "../store-key";
import { keyDigest } from "./key-digest";

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * Most keys held at once. When full, a new key takes the place of one held key, found in O(1) (CLOCK): of the
   * next four keys the clock hand reaches, the first whose allowance is full again (it carries no state); else the
   * hand passes over keys admitted since it last went by (a second chance, at most eight) and evicts the next one,
   * however recently it was admitted. An evicted key that comes back starts with a full allowance: under pressure
   * the store fails open for it.
   * @default 100_000
   * @see docs/rate-limits.md, "In memory (default)"
   */
  maxKeys?: number;
  /**
   * Longest key held as it is, in UTF-16 code units; a longer one is held by a 128-bit digest (33 characters), so that
   * keys a client chooses (a header, a token: up to 16 KB on Node) cannot grow the store past `maxKeys` keys of at
   * most this many characters each. Keys stay apart either way.
   * @default 256
   */
  maxKeyLength?: number;
}

/** The in-memory store, with a peek at its size for tests and metrics. */
export interface MemoryStore extends RateLimitStore {
  checkSync(key: string, set: PolicySet, nowMs: number): GcraOutcome;
  /** Keys currently held. */
  readonly size: number;
  /** Characters of the keys held: at most `size × max(maxKeyLength, 33)`. */
  readonly keyChars: number;
  /** Forgets every key. */
  clear(): void;
}

interface Entry {
  readonly key: string;
  set: string;
  state: number[] | undefined;
  expiresAtMs: number;
  /** Admitted since it was last passed over for eviction (CLOCK "second chance"). */
  used: boolean;
}

const SWEEP = 4;
const SECOND_CHANCES = 8;

/**
 * Creates the embedded store: a bounded map, for one process; no timers.
 * @param options `maxKeys`, the most keys held at once; `maxKeyLength`, the longest key held as it is.
 * @example createRateLimiter({ policies, store: createMemoryStore({ maxKeys: 10_000 }) })
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("createMemoryStore: options must be an object");
  }
  const maxKeys = positiveInteger("createMemoryStore", "maxKeys", options.maxKeys ?? 100_000);
  const maxKeyLength = positiveInteger("createMemoryStore", "maxKeyLength", options.maxKeyLength ?? 256);
  let keyChars = 0;
  const entries = new Map<string, Entry>();
  // Every held key in a ring, in the order the clock hand reaches them (oldest admitted first). An admitted key is
  // marked used rather than moved: the hand gives it a second chance (CLOCK). A ring, not the Map's insertion order:
  // V8 leaves a deleted Map entry as a hole until the table is rebuilt, so taking the oldest key from the front of a
  // Map that keeps churning walks every hole first, ~150 µs per new key at 100,000 keys.
  let ring: Entry[] = [];
  let hand = 0;

  function forget(entry: Entry): void {
    entries.delete(entry.key);
    keyChars -= entry.key.length;
  }

  // Called when the store is full, to hold `added` in place of one key; looks at a bounded number of keys, so O(1).
  // The new key goes where the hand is, then the hand moves past it: it is the last the hand reaches again.
  function replaceOne(added: Entry, nowMs: number): void {
    const size = ring.length;
    // A key whose TAT is in the past holds no state: dropping it loses nothing. The keys the hand passes on the way
    // to it move up one, staying the oldest.
    for (let ahead = 0; ahead < Math.min(SWEEP, size); ahead++) {
      const at = (hand + ahead) % size;
      const candidate = ring[at] as Entry;
      if (candidate.expiresAtMs > nowMs) continue;
      forget(candidate);
      for (let i = at; i !== hand; i = (i - 1 + size) % size) ring[i] = ring[(i - 1 + size) % size] as Entry;
      ring[hand] = added;
      hand = (hand + 1) % size;
      return;
    }
    for (let chance = 0; chance < SECOND_CHANCES; chance++) {
      const candidate = ring[hand] as Entry;
      if (!candidate.used) break;
      candidate.used = false;
      hand = (hand + 1) % size;
    }
    forget(ring[hand] as Entry);
    ring[hand] = added;
    hand = (hand + 1) % size;
  }

  function checkSync(given: string, set: PolicySet, nowMs: number): GcraOutcome {
    assertStoreKey(given);
    assertStoreNow(nowMs);
    const key = given.length > maxKeyLength ? keyDigest(given) : given;
    const entry = entries.get(key);
    if (entry === undefined) {
      const step = gcraCheck(set.limits, undefined, nowMs);
      if (step.allowed) {
        const added: Entry = { key, set: set.id, state: step.state, expiresAtMs: step.expiresAtMs, used: false };
        if (entries.size >= maxKeys) replaceOne(added, nowMs);
        else ring.push(added);
        entries.set(key, added);
        keyChars += key.length;
      }
      return step;
    }
    const same = entry.set === set.id;
    // Same limits: the new state overwrites the old array in place. Other limits: the state carries over.
    const state = same ? entry.state : carryState(entry.set, entry.state, set.id, set.limits, nowMs);
    const step = gcraCheck(set.limits, state, nowMs, same ? entry.state : undefined);
    if (step.allowed) {
      entry.set = set.id;
      entry.state = step.state;
      entry.expiresAtMs = step.expiresAtMs;
      entry.used = true;
    }
    return step;
  }

  return {
    get size() {
      return entries.size;
    },
    get keyChars() {
      return keyChars;
    },
    clear() {
      entries.clear();
      keyChars = 0;
      ring = [];
      hand = 0;
    },
    checkSync,
    check(key: string, set: PolicySet, nowMs: number): Promise<GcraOutcome> {
      try {
        return Promise.resolve(checkSync(key, set, nowMs));
      } catch (error) {
        return Promise.reject(error); // a misuse rejects, as it does with the other stores
      }
    },
  };
}
