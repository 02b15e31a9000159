import { createHash, type Hash } from "node:crypto";

/** What identifies a request for the reuse check. */
export interface FingerprintInput {
  /** Upper-case method. */
  method: string;
  /** The request target: path, plus `?` and the query when there is one. */
  target: string;
  /** The caller's identity, as `identify` returned it. */
  caller: string;
  /** The body bytes exactly as received. */
  body: Uint8Array;
}

// Each part is length-prefixed so that no two different inputs hash the same byte stream.
function field(hash: Hash, value: string | Uint8Array): void {
  const bytes = typeof value === "string" ? Buffer.from(value, "utf8") : value;
  hash.update(`${bytes.byteLength}:`);
  hash.update(bytes);
}

/**
 * The request fingerprint: SHA-256 (base64url, 43 characters) of method, target, caller and body bytes.
 * A key presented again with another fingerprint gets 422.
 *
 * @param input the request's method, target, caller and body; each is length-prefixed before hashing,
 *   so no two different inputs hash the same byte stream.
 * @example
 * requestFingerprint({ method: "POST", target: "/orders", caller: "acct_1", body: new TextEncoder().encode("{}") })
 * // "…" (43 base64url characters)
 * @see https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/ ("Idempotency Fingerprint"; "Error Scenarios": 422 for a reused key)
 */
export function requestFingerprint(input: FingerprintInput): string {
  const hash = createHash("sha256");
  field(hash, input.method);
  field(hash, input.target);
  field(hash, input.caller);
  field(hash, input.body);
  return hash.digest("base64url");
}

/**
 * The key a store files a record under: SHA-256 (base64url, 43 characters) of caller and key, so
 * one caller's key never meets another's record and store keys have a fixed length.
 *
 * @param caller the caller's identity, as `identify` returned it.
 * @param key the Idempotency-Key as parsed by `parseIdempotencyKey`.
 * @example scopedKey("acct_1", "8e03978e-40d5") !== scopedKey("acct_2", "8e03978e-40d5") // true
 * @see https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/ ("Uniqueness of Idempotency Key", scoped here per caller)
 */
export function scopedKey(caller: string, key: string): string {
  const hash = createHash("sha256");
  field(hash, caller);
  field(hash, key);
  return hash.digest("base64url");
}
