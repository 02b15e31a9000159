import { createHash, type Hash } from "node:crypto";
import { isWellFormed } from "../http/well-formed";
import { FINGERPRINT_PREFIX } from "./fingerprint-form";

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
  /** The Content-Type field value as received; `undefined` when the request has none (not the same as empty). */
  contentType?: string | undefined;
  /** The Content-Encoding field value as received; `undefined` when the request has none (not the same as empty). */
  contentEncoding?: string | undefined;
}

// Each part is length-prefixed so that no two different inputs hash the same byte stream.
function field(hash: Hash, value: string | Uint8Array): void {
  if (typeof value === "string" && !isWellFormed(value)) {
    // RFC 3629 §3: UTF-8 cannot encode a lone surrogate; Buffer.from writes U+FFFD for it, so "a\uD800" and "a\uFFFD"
    // hashed alike and two callers shared their keys. Such a string is hashed as its UTF-16 code units after "u",
    // never the digit that starts every other field: well-formed strings keep the bytes they always hashed.
    hash.update("u");
    field(hash, Buffer.from(value, "utf16le"));
    return;
  }
  const bytes = typeof value === "string" ? Buffer.from(value, "utf8") : value;
  hash.update(`${bytes.byteLength}:`);
  hash.update(bytes);
}

// An absent field is "-", a present one its length-prefixed value: a length starts with a digit, never "-", so an
// absent field and an empty one ("0:") hash differently.
function optionalField(hash: Hash, value: string | undefined): void {
  if (value === undefined) hash.update("-");
  else field(hash, value);
}

// The parts both forms cover, in the order 0.1 hashed them.
function requestHash(input: FingerprintInput): Hash {
  const hash = createHash("sha256");
  field(hash, input.method);
  field(hash, input.target);
  field(hash, input.caller);
  field(hash, input.body);
  return hash;
}

/**
 * The request fingerprint: `v2.` and the SHA-256 (base64url, 43 characters) of method, target, caller, body bytes,
 * Content-Type and Content-Encoding. A key presented again with another fingerprint gets 422.
 *
 * Content-Type and Content-Encoding count because they say what the body bytes mean (RFC 9110 §8.3, §8.4): the same
 * bytes sent as JSON and without a media type are two requests, and may get two answers (201 and 415). The values are
 * hashed as received, not normalised: a retrying client resends the same field bytes, and a normalisation that parsed
 * the media type (case of type and subtype, spaces, parameter order, RFC 9110 §8.3.1) could only make more requests
 * equal, some of which a handler tells apart (a parameter value such as a multipart boundary is case-sensitive).
 * Spaces around a value are gone already: the HTTP parsers under the adapters strip them (RFC 9110 §5.5).
 *
 * @param input the request's method, target, caller, body and the two fields; each part is length-prefixed before
 *   hashing and an absent field is marked apart from an empty one, so no two different inputs hash the same bytes.
 * @example
 * const body = new TextEncoder().encode("{}");
 * requestFingerprint({ method: "POST", target: "/orders", caller: "acct_1", body, contentType: "application/json" })
 * // "v2.…" (46 characters)
 * @see https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/ ("Idempotency Fingerprint"; "Error Scenarios": 422 for a reused key)
 */
export function requestFingerprint(input: FingerprintInput): string {
  const hash = requestHash(input);
  optionalField(hash, input.contentType);
  optionalField(hash, input.contentEncoding);
  return FINGERPRINT_PREFIX + hash.digest("base64url");
}

/**
 * The fingerprint in the form 0.1 stored (43 base64url characters: method, target, caller and body only), for
 * comparing a request with a record 0.1 wrote. Computed only when such a record is found: it hashes the body again.
 */
export function legacyRequestFingerprint(input: FingerprintInput): string {
  return requestHash(input).digest("base64url");
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
