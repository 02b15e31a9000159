import { z } from "zod";
import { IdempotencyError } from "../errors";
import type { BeginResult, StoredResponse } from "../store";

// Values are bytes. In progress: "p" + lease token, where the token is a 36-character nonce followed
// by the fingerprint. Completed: "c" + length ":" fingerprint + length ":" JSON of status and
// headers, then the body bytes as they are (no base64: the value is as large as the body, no
// larger). Lengths are in bytes.
//
// The nonce carries the lease's deadline, so the value that `SET … NX GET` returns tells how much
// of the lease is left without a second command: "L", the deadline (epoch ms) in 11 hex digits, the
// lease (ms) in 11 hex digits, 13 random hex digits. 0.1 wrote a `randomUUID()` nonce (lower-case,
// never an "L") and reads the nonce as opaque, so 0.1 and later versions can share a Redis.
const P = 0x70;
const C = 0x63;
const COLON = 0x3a;

/** The length of the nonce that starts every lease token. */
export const NONCE_LENGTH = 36;

const HEX_DIGITS = 11;
// 16^11 ms is about 557 years: deadlines and leases are clamped to it to keep the nonce's length.
const HEX_MAX = 16 ** HEX_DIGITS - 1;
const TIMED_NONCE = /^L[0-9a-f]{35}$/;

// 2^24: the low 6 hex digits. Each half fits a small integer, whose toString(16) is V8's fast path;
// a number of 2^31 or more (any epoch-ms deadline) takes a slow floating-point one, 3-4x slower.
const LOW = 0x1000000;

function hex(value: number): string {
  const clamped = Math.min(Math.max(0, Math.floor(value)), HEX_MAX);
  const high = Math.floor(clamped / LOW);
  return high.toString(16).padStart(HEX_DIGITS - 6, "0") + (clamped - high * LOW).toString(16).padStart(6, "0");
}

/**
 * {@link hex} remembering its last answer: consecutive leases share their length and, within a millisecond, their
 * deadline. Formatting both took 0.2 µs of the ~2 µs the store adds per begin+complete (bench/idempotency, Redis 63 B).
 */
class LastHex {
  #value = Number.NaN;
  #hex = "";

  of(value: number): string {
    if (value !== this.#value) {
      this.#hex = hex(value);
      this.#value = value;
    }
    return this.#hex;
  }
}
const deadlineHex = new LastHex();
const leaseHex = new LastHex();

/**
 * A new lease token for `fingerprint`: a nonce holding the lease's deadline and length, then the
 * fingerprint (so `complete` can build the completed value without reading the record first).
 * @param random 13 or more random hex digits (only the first 13 are used).
 */
export function leaseToken(fingerprint: string, leaseMs: number, now: number, random: string): string {
  return `L${deadlineHex.of(now + leaseMs)}${leaseHex.of(leaseMs)}${random.slice(0, 13)}${fingerprint}`;
}

/**
 * The lease left of the in-progress `value` at `now`, read from its nonce and clamped to
 * [0, the lease's length]; `undefined` for a nonce without a deadline (written by 0.1).
 */
function leaseLeft(value: Buffer, now: number): number | undefined {
  const nonce = value.toString("latin1", 1, 1 + NONCE_LENGTH);
  if (!TIMED_NONCE.test(nonce)) return undefined;
  const deadline = Number.parseInt(nonce.slice(1, 1 + HEX_DIGITS), 16);
  const lease = Number.parseInt(nonce.slice(1 + HEX_DIGITS, 1 + 2 * HEX_DIGITS), 16);
  return Math.min(lease, Math.max(0, deadline - now));
}

/** Status and headers of a stored response, as JSON. */
const metaSchema = z.object({
  s: z.number().int().min(100).max(599),
  h: z.record(z.string(), z.union([z.string(), z.array(z.string())])),
});

/**
 * The in-progress value of the lease `token`. The token carries the fingerprint, so `complete` can
 * build the completed value without reading the record first, and an exact match fences it.
 */
export function encodeInProgress(token: string): string {
  return `p${token}`;
}

/** The completed value of a lease `token`: its fingerprint, then `response`. */
export function encodeCompleted(token: string, response: StoredResponse): Buffer {
  const fingerprint = token.slice(NONCE_LENGTH);
  const meta = JSON.stringify({ s: response.status, h: response.headers });
  let head = `c${fingerprint.length}:${fingerprint}${meta.length}:${meta}`;
  let headBytes = Buffer.byteLength(head);
  // One count of bytes instead of three (bench/idempotency, Redis 63 B): characters are bytes exactly when the head is
  // ASCII, as it nearly always is; otherwise each part's bytes are counted.
  if (headBytes !== head.length) {
    head = `c${Buffer.byteLength(fingerprint)}:${fingerprint}${Buffer.byteLength(meta)}:${meta}`;
    headBytes = Buffer.byteLength(head);
  }
  const body = response.body;
  const value = Buffer.allocUnsafe(headBytes + body.byteLength);
  value.set(body, value.write(head, 0, "utf8"));
  return value;
}

function invalid(cause?: unknown): IdempotencyError {
  return new IdempotencyError("idempotency_record_invalid", "The Redis idempotency record cannot be decoded.", {
    cause,
  });
}

// Reads `length ":" bytes` at `at`; returns the bytes' bounds.
function lengthPrefixed(value: Buffer, at: number): [start: number, end: number] {
  const colon = value.indexOf(COLON, at);
  const digits = colon > at ? value.toString("latin1", at, colon) : "";
  const length = /^\d{1,10}$/.test(digits) ? Number(digits) : Number.NaN;
  if (!Number.isSafeInteger(length) || colon + 1 + length > value.length) throw invalid();
  return [colon + 1, colon + 1 + length];
}

function decodeCompleted(value: Buffer): BeginResult {
  const [fpStart, fpEnd] = lengthPrefixed(value, 1);
  const [metaStart, metaEnd] = lengthPrefixed(value, fpEnd);
  let json: unknown;
  try {
    json = JSON.parse(value.toString("utf8", metaStart, metaEnd));
  } catch (error) {
    throw invalid(error);
  }
  const meta = metaSchema.safeParse(json);
  if (!meta.success) throw invalid(meta.error);
  return {
    kind: "completed",
    fingerprint: value.toString("utf8", fpStart, fpEnd),
    response: { status: meta.data.s, headers: meta.data.h, body: value.subarray(metaEnd) },
  };
}

/** How `begin` reads an in-progress record's lease left. */
export interface LeaseClock {
  /** The PTTL Redis returned with the value (the script path): exact. */
  readonly pttl?: unknown;
  /** The store's clock, for a deadline read from the nonce (the `SET … NX GET` path). */
  readonly now: number;
  /** The lease `begin` asked for: the estimate for a 0.1 lease, whose nonce has no deadline. */
  readonly leaseMs: number;
}

/** Reads what `begin` found under a key: a completed response or an in-progress lease and its time left. */
export function decodeExisting(value: unknown, clock: LeaseClock): BeginResult {
  if (!Buffer.isBuffer(value)) throw invalid();
  if (value[0] === P) {
    if (value.length < 1 + NONCE_LENGTH) throw invalid();
    const { pttl } = clock;
    if (pttl !== undefined && typeof pttl !== "number") throw invalid();
    const left = pttl ?? leaseLeft(value, clock.now) ?? clock.leaseMs;
    return {
      kind: "in-progress",
      fingerprint: value.toString("utf8", 1 + NONCE_LENGTH),
      retryAfterMs: Math.max(0, left),
    };
  }
  if (value[0] === C) return decodeCompleted(value);
  throw invalid();
}
