import { type GcraOutcome, gcraCheck } from "../gcra";
import type { PolicySet } from "../policy";
import type { RateLimitStore } from "../store";

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * Most keys held at once. When full, a new key first evicts a key whose allowance is full again (it
   * carries no state), else the least recently admitted key (it then starts afresh: evicting fails open).
   * @default 100_000
   */
  maxKeys?: number;
}

/** The in-memory store, with a peek at its size for tests and metrics. */
export interface MemoryStore extends RateLimitStore {
  checkSync(key: string, set: PolicySet, nowMs: number): GcraOutcome;
  /** Keys currently held. */
  readonly size: number;
  /** Forgets every key. */
  clear(): void;
}

interface Entry {
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
 * @param options `maxKeys`, the most keys held at once.
 * @example createRateLimiter({ policies, store: createMemoryStore({ maxKeys: 10_000 }) })
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const maxKeys = options.maxKeys ?? 100_000;
  if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) {
    throw new TypeError(`memory store: maxKeys must be a positive integer, got ${String(maxKeys)}`);
  }
  // Insertion order; an admitted key is marked used instead of moved, and moved only when eviction reaches it.
  const entries = new Map<string, Entry>();

  // Called before adding a key when the map is full; looks at a bounded number of entries, so O(1).
  function makeRoom(nowMs: number): void {
    let freed = false;
    let looked = 0;
    for (const [key, entry] of entries) {
      // A key whose TAT is in the past holds no state: dropping it loses nothing.
      if (entry.expiresAtMs <= nowMs) {
        entries.delete(key);
        freed = true;
      }
      if (++looked === SWEEP) break;
    }
    if (freed) return;
    for (let chance = 0; chance < SECOND_CHANCES; chance++) {
      const first = entries.entries().next();
      if (first.done) return;
      const [key, entry] = first.value;
      if (!entry.used) break;
      entry.used = false;
      entries.delete(key);
      entries.set(key, entry);
    }
    const victim = entries.keys().next();
    if (!victim.done) entries.delete(victim.value);
  }

  function checkSync(key: string, set: PolicySet, nowMs: number): GcraOutcome {
    const entry = entries.get(key);
    if (entry === undefined) {
      const step = gcraCheck(set.limits, undefined, nowMs);
      if (step.allowed) {
        if (entries.size >= maxKeys) makeRoom(nowMs);
        entries.set(key, { set: set.id, state: step.state, expiresAtMs: step.expiresAtMs, used: false });
      }
      return step;
    }
    const same = entry.set === set.id;
    // Same limits: the new state overwrites the old array in place.
    const step = gcraCheck(set.limits, same ? entry.state : undefined, nowMs, same ? entry.state : undefined);
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
    clear() {
      entries.clear();
    },
    checkSync,
    check(key: string, set: PolicySet, nowMs: number): Promise<GcraOutcome> {
      return Promise.resolve(checkSync(key, set, nowMs));
    },
  };
}
