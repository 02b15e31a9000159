import { z } from "zod";
import { IdempotencyError } from "../errors";
import type { BeginResult, StoredResponse } from "../store";

// Values are bytes. In progress: "p" + lease token, where the token is a random UUID (fixed length)
// followed by the fingerprint. Completed: "c" + length ":" fingerprint + length ":" JSON of status
// and headers, then the body bytes as they are (no base64: the value is as large as the body, no
// larger). Lengths are in bytes. Both layouts are unchanged since 0.1, so versions can share a Redis.
const P = 0x70;
const C = 0x63;
const COLON = 0x3a;

/** The length of the random part of a lease token: a `randomUUID()`. */
export const NONCE_LENGTH = 36;

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
  const head = `c${Buffer.byteLength(fingerprint)}:${fingerprint}${Buffer.byteLength(meta)}:${meta}`;
  const body = response.body;
  const headLength = Buffer.byteLength(head);
  const value = Buffer.allocUnsafe(headLength + body.byteLength);
  value.write(head, 0, "utf8");
  Buffer.from(body.buffer, body.byteOffset, body.byteLength).copy(value, headLength);
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

/** Whether `value` is an in-progress record (whose lease left must then be read with it). */
export function isInProgress(value: unknown): boolean {
  return Buffer.isBuffer(value) && value[0] === P;
}

/** Reads what `begin` found under a key: the value and its remaining time to live (PTTL). */
export function decodeExisting(value: unknown, pttl: unknown): BeginResult {
  if (!Buffer.isBuffer(value)) throw invalid();
  if (value[0] === P) {
    if (typeof pttl !== "number" || value.length < 1 + NONCE_LENGTH) throw invalid();
    return {
      kind: "in-progress",
      fingerprint: value.toString("utf8", 1 + NONCE_LENGTH),
      retryAfterMs: Math.max(0, pttl),
    };
  }
  if (value[0] === C) return decodeCompleted(value);
  throw invalid();
}
