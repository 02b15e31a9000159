import { optionalFunction } from "../../options/function-option";
import { finiteNumber, positiveInteger } from "../../options/number-option";
import { IdempotencyError } from "../errors";
import type { BeginResult, IdempotencyStore, StoredResponse } from "../store";
import {
  checkBeginText,
  checkCompleteText,
  checkLeaseMs,
  checkReleaseText,
  checkResponseText,
  checkStatus,
  checkTtlMs,
} from "../store-arguments";

/** Options of {@link MemoryIdempotencyStore}. */
export interface MemoryStoreOptions {
  /**
   * Most records kept; at the bound the least recently completed record is evicted. Size it above
   * the keys one TTL sees: evicting a live record forgets it (a retry would run the handler again). Records in
   * progress are never evicted for it (a lease evicted would let a retry run the handler while the first still
   * runs), so requests in flight may pass it; they are bounded by the server's concurrency and their leases.
   * @default 10_000
   */
  maxEntries?: number;
  /**
   * Most bytes the records hold: keys and fingerprints by their length, with each stored response's body and the octets of
   * its kept header names and values (see the docs; the objects around them are bounded by `maxEntries`). A response that would go
   * past it first makes room by evicting expired leases and completed records, in the order `maxEntries` evicts (least
   * recently completed first); records in progress are never evicted for it, since a lease evicted would let a
   * retry run the handler while the first still runs. A response that cannot fit even so is not stored: `complete`
   * throws {@link IdempotencyError} `idempotency_response_too_large` (larger than the bound alone) or
   * `idempotency_store_full` (leases fill it), the lease is left to run out as after any failed write, and the
   * middleware reports it through `onStoreError` while the client gets the handler's response. `Infinity` for no
   * bound.
   * @default 67_108_864 (64 MiB)
   */
  maxBytes?: number;
  /**
   * The clock, in milliseconds; tests pass a fake one. Only differences count: it is read once at
   * construction (times are kept relative to that reading) and once per operation. A reading that is not a finite
   * number throws a `TypeError` (at construction, or from the operation that read it).
   * @default performance.now: a monotonic clock, so a step of the wall clock (an NTP correction) neither ends a
   * lease early, letting a retry run the handler beside the first request, nor keeps records past their TTL.
   */
  now?: () => number;
}

class MemoryRecord {
  // Neighbours in its list (leases in the order they began, completed records in the order they completed; oldest
  // first); the lists, not Map iteration, drive eviction: V8 iterates a Map from its start, past every deleted slot, so
  // evicting through `map.keys().next()` degrades to O(n) under steady churn.
  prev: MemoryRecord | undefined = undefined;
  next: MemoryRecord | undefined = undefined;
  key = "";
  fingerprint = "";
  // Milliseconds since the store's epoch, not since 1970: V8 keeps a small integer unboxed (a
  // Smi), where epoch ms need a 16-byte heap number per record for the collector to copy. Past
  // 2^31 ms (about 24 days after construction; 12 with pointer compression) values are boxed again.
  expiresAt = 0;
  // The lease token while in progress; the response once completed (one field: a smaller record). It also says which
  // list holds the record.
  state: string | StoredResponse = "";
  // What it counts toward maxBytes (leaseBytes, plus responseBytes once completed).
  bytes = 0;
}

/**
 * Records in the order they were appended, oldest first. Leases and completed records are kept in two lists, so that
 * making room walks only records it can evict, never past the requests in flight.
 */
class RecordList {
  oldest: MemoryRecord | undefined = undefined;
  newest: MemoryRecord | undefined = undefined;

  append(record: MemoryRecord): void {
    record.prev = this.newest;
    record.next = undefined;
    if (this.newest === undefined) this.oldest = record;
    else this.newest.next = record;
    this.newest = record;
  }

  unlink(record: MemoryRecord): void {
    if (record.prev === undefined) this.oldest = record.next;
    else record.prev.next = record.next;
    if (record.next === undefined) this.newest = record.prev;
    else record.next.prev = record.prev;
    record.prev = undefined;
    record.next = undefined;
  }

  clear(): void {
    this.oldest = undefined;
    this.newest = undefined;
  }
}

/**
 * Whole milliseconds from an arbitrary origin that never step back: only differences are read. Whole, so that times
 * kept relative to the epoch stay small integers (see MemoryRecord.expiresAt).
 */
const monotonicNow = (): number => Math.floor(performance.now());

/** The memory store's default `maxBytes`: 64 MiB of keys, fingerprints and stored responses. */
const DEFAULT_MAX_BYTES = 64 * 2 ** 20;

/**
 * What a lease counts toward `maxBytes`: its key and fingerprint by their length (the token's few digits left out).
 * The middleware's keys are visible ASCII (the draft's sf-string) and fingerprints are digests, so a character is a
 * byte; not `utf8Length`, which walks every character on this per-write path (bench/idempotency, memory).
 */
function leaseBytes(key: string, fingerprint: string): number {
  return key.length + fingerprint.length;
}

/**
 * What a stored response adds to its lease's bytes: the body, and the kept header names and values by their length,
 * the octets they take on the wire (RFC 9110 §5.5: a field value is octets; the adapters write one per character).
 * Not `utf8Length`, which walks every character on this per-write path (bench/idempotency, memory).
 */
function responseBytes(response: StoredResponse): number {
  let bytes = response.body.byteLength;
  const headers = response.headers;
  for (const name in headers) {
    const value = headers[name];
    if (typeof value === "string") bytes += name.length + value.length;
    else if (value !== undefined) for (const item of value) bytes += name.length + item.length;
  }
  return bytes;
}

/**
 * What `begin` hands out for a completed record: its own copy of the body, the one part a caller can write into (the
 * header fields are read-only by type). One shared buffer let a handler, middleware or adapter that wrote into a replay
 * change every later one; Redis and PostgreSQL decode a fresh buffer per read. Copied here, on read, not in `complete`:
 * the middleware already hands `complete` a copy of its own (`toStoredResponse`), and a write allocates nothing else.
 */
function replayCopy(response: StoredResponse): StoredResponse {
  // Not `slice()`: on a Node Buffer it is a view of the same memory.
  return { status: response.status, headers: response.headers, body: new Uint8Array(response.body) };
}

// How many expired records at the head of each list one write may drop: constant work per call.
const SWEEP_PER_WRITE = 2;

/**
 * The in-process store: a `Map` plus two lists in write order (leases, completed records), so every operation is
 * O(1). Good for one
 * instance and for tests; several instances need a shared store (Redis or PostgreSQL). It answers at once, with
 * plain values rather than promises (the {@link IdempotencyStore} contract allows either; `await` works on both).
 * `begin` hands each replay a copy of the stored body; `complete` keeps the response it is given, uncopied (the
 * middleware's is a copy of its own): a caller writing into that body afterwards changes the stored one.
 * @example idempotency({ store: new MemoryIdempotencyStore({ maxEntries: 50_000 }), identify })
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #records = new Map<string, MemoryRecord>();
  readonly #leases = new RecordList();
  readonly #completed = new RecordList();
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  #bytes = 0;
  // The part of #bytes held by completed records, which may be evicted to make room.
  #completedBytes = 0;
  readonly #now: () => number;
  // Every time kept is relative to this instant (see MemoryRecord.expiresAt).
  readonly #epoch: number;
  #tokens = 0;

  constructor(options: MemoryStoreOptions = {}) {
    this.#maxEntries = positiveInteger("MemoryIdempotencyStore", "maxEntries", options.maxEntries ?? 10_000);
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.#maxBytes =
      maxBytes === Number.POSITIVE_INFINITY
        ? maxBytes
        : positiveInteger("MemoryIdempotencyStore", "maxBytes", maxBytes, "bytes");
    const clock =
      optionalFunction("MemoryIdempotencyStore", "now", options.now, "a function returning ms") ?? monotonicNow;
    // A reading of NaN compares false with every expiry: each lease would look run out, so each retry would acquire
    // and run the handler again. A clock that cannot be compared is refused, as the other modules' clocks are.
    this.#now = () => finiteNumber("MemoryIdempotencyStore", "now()", clock(), "milliseconds");
    this.#epoch = this.#now();
  }

  /** The number of records held, live or not yet swept. */
  get size(): number {
    return this.#records.size;
  }

  /** What the records held count toward `maxBytes`. */
  get bytes(): number {
    return this.#bytes;
  }

  begin(key: string, fingerprint: string, leaseMs: number): BeginResult {
    checkLeaseMs(leaseMs);
    checkBeginText(key, fingerprint);
    const now = this.#now() - this.#epoch;
    const found = this.#records.get(key);
    if (found !== undefined) {
      if (found.expiresAt > now) {
        const state = found.state;
        if (typeof state !== "string") {
          return { kind: "completed", fingerprint: found.fingerprint, response: replayCopy(state) };
        }
        return {
          kind: "in-progress",
          fingerprint: found.fingerprint,
          retryAfterMs: found.expiresAt - now,
        };
      }
      this.#remove(found);
    }
    // A full store (its steady state) evicts a record for every new one: the new key takes over the evicted record,
    // so no record is allocated per write and none lives long enough for the collector to copy it out of the young
    // generation (bench/idempotency, memory at 100,000 entries: 0.70 of the bare Map without this, 0.99–1.05 with it).
    const record = this.#makeRoom(now) ?? new MemoryRecord();
    const token = String(++this.#tokens);
    record.key = key;
    record.fingerprint = fingerprint;
    record.expiresAt = now + leaseMs;
    record.state = token;
    record.bytes = leaseBytes(key, fingerprint);
    // A lease is never refused for its bytes (a key of at most 255 characters, one per request in flight): it only
    // makes room by evicting expired leases and completed records, so `bytes` passes maxBytes by leases alone.
    this.#free(this.#bytes + record.bytes - this.#maxBytes, now);
    this.#records.set(key, record);
    this.#leases.append(record);
    this.#bytes += record.bytes;
    return { kind: "acquired", leaseToken: token };
  }

  complete(key: string, leaseToken: string, response: StoredResponse, ttlMs: number): boolean {
    checkTtlMs(ttlMs);
    checkStatus(response);
    const now = this.#now() - this.#epoch;
    const found = this.#records.get(key);
    if (found === undefined || found.state !== leaseToken || found.expiresAt <= now) {
      checkCompleteText(key, leaseToken, response);
      return false;
    }
    // The key and the token are known good (begin checked the key and made the token): only the response is new. Two
    // string checks fewer on the path bench/idempotency's memory case times.
    checkResponseText(response);
    const bytes = found.bytes + responseBytes(response);
    // Refused, not released: the handler's effect has happened, and a released key would let a retry repeat it at
    // once (draft-ietf-httpapi-idempotency-key-header, "Idempotency Enforcement"). The lease runs out as after any
    // failed write; storing less than the response would replay another one.
    if (bytes > this.#maxBytes) {
      throw new IdempotencyError(
        "idempotency_response_too_large",
        `MemoryIdempotencyStore: the response counts ${bytes} bytes (body, header fields, key and fingerprint), more than maxBytes (${this.#maxBytes}) can ever hold: it was not stored.`,
      );
    }
    let excess = this.#bytes - found.bytes + bytes - this.#maxBytes;
    if (excess > this.#completedBytes) {
      // Leases fill the bound: only here is every lease looked at, for expired ones, before the response is refused.
      excess = this.#dropExpiredLeases(excess, now);
      // Nothing is evicted for a record that would not fit anyway.
      if (excess > this.#completedBytes) {
        throw new IdempotencyError(
          "idempotency_store_full",
          `MemoryIdempotencyStore: records in progress leave no room under maxBytes (${this.#maxBytes}) for a response of ${bytes} bytes: it was not stored.`,
        );
      }
    }
    this.#free(excess, now);
    this.#leases.unlink(found);
    this.#bytes += bytes - found.bytes;
    this.#completedBytes += bytes;
    found.bytes = bytes;
    found.state = response;
    found.expiresAt = now + ttlMs;
    this.#completed.append(found);
    return true;
  }

  release(key: string, leaseToken: string): boolean {
    checkReleaseText(key, leaseToken);
    const now = this.#now() - this.#epoch;
    const found = this.#records.get(key);
    // A lease that has run out is no longer held, as in complete (fencing): nothing is deleted.
    if (found === undefined || found.state !== leaseToken || found.expiresAt <= now) return false;
    this.#remove(found);
    return true;
  }

  /** Forgets every record. */
  clear(): void {
    this.#records.clear();
    this.#leases.clear();
    this.#completed.clear();
    this.#bytes = 0;
    this.#completedBytes = 0;
  }

  /**
   * Frees `excess` bytes: expired leases at the old end of theirs, then completed records, least recently completed
   * first. Returns what is still in excess. Each step evicts a record: no request in flight is passed over.
   */
  #free(excess: number, now: number): number {
    let lease = this.#leases.oldest;
    while (excess > 0 && lease !== undefined && lease.expiresAt <= now) {
      excess -= lease.bytes;
      this.#remove(lease);
      lease = this.#leases.oldest;
    }
    let record = this.#completed.oldest;
    while (excess > 0 && record !== undefined) {
      excess -= record.bytes;
      this.#remove(record);
      record = this.#completed.oldest;
    }
    return excess;
  }

  /** Frees `excess` bytes from expired leases wherever they are (leases of different lengths expire out of order). */
  #dropExpiredLeases(excess: number, now: number): number {
    let lease = this.#leases.oldest;
    while (excess > 0 && lease !== undefined) {
      const next = lease.next;
      if (lease.expiresAt <= now) {
        excess -= lease.bytes;
        this.#remove(lease);
      }
      lease = next;
    }
    return excess;
  }

  /**
   * Drops expired records at the old end of each list and, at the bound, the least recently completed record (never
   * a lease); returns the last record dropped.
   */
  #makeRoom(now: number): MemoryRecord | undefined {
    const leaseDropped = this.#sweep(this.#leases, now);
    let dropped = this.#sweep(this.#completed, now) ?? leaseDropped;
    const oldest = this.#completed.oldest;
    if (this.#records.size >= this.#maxEntries && oldest !== undefined) {
      this.#remove(oldest);
      dropped = oldest;
    }
    return dropped;
  }

  /** Drops up to SWEEP_PER_WRITE expired records at the old end of `list`; returns the last one dropped. */
  #sweep(list: RecordList, now: number): MemoryRecord | undefined {
    let dropped: MemoryRecord | undefined;
    for (let i = 0; i < SWEEP_PER_WRITE; i++) {
      const oldest = list.oldest;
      if (oldest === undefined || oldest.expiresAt > now) break;
      this.#remove(oldest);
      dropped = oldest;
    }
    return dropped;
  }

  #remove(record: MemoryRecord): void {
    this.#bytes -= record.bytes;
    this.#records.delete(record.key);
    if (typeof record.state === "string") {
      this.#leases.unlink(record);
    } else {
      this.#completedBytes -= record.bytes;
      this.#completed.unlink(record);
    }
  }
}
