import { Buffer } from "node:buffer";
import { MAX_SECRET_BYTES, MIN_SECRET_BYTES, SECRET_PREFIX } from "../signing/standard-keys";

// What follows the prefix: base64 text and its padding.
const BASE64 = /^([A-Za-z0-9+/]+)(={0,2})$/;
// Base64 characters of the shortest and the longest secret, without padding.
const MIN_TEXT = Math.ceil((MIN_SECRET_BYTES * 4) / 3);
const MAX_TEXT = Math.ceil((MAX_SECRET_BYTES * 4) / 3);

/**
 * Whether `value` is a signing secret an endpoint may be given (`secret` at creation or rotation, to keep the one
 * another sender gave the consumer, as Svix's import does): `whsec_` and the canonical base64 of 24 to 64 bytes,
 * padded or not. Decoded without the signing module's cache: the value comes from a request.
 */
export function isEndpointSecret(value: unknown): value is string {
  // At most two characters of padding after the longest text.
  if (typeof value !== "string" || value.length > SECRET_PREFIX.length + MAX_TEXT + 2) return false;
  if (!value.startsWith(SECRET_PREFIX)) return false;
  const match = BASE64.exec(value.slice(SECRET_PREFIX.length));
  if (match === null) return false;
  const text = match[1] as string;
  const bytes = Buffer.from(text, "base64");
  if (bytes.length < MIN_SECRET_BYTES || bytes.length > MAX_SECRET_BYTES) return false;
  // Canonical: the bytes encode to the same text (no stray bits in the last character, padding that fits).
  const encoded = bytes.toString("base64");
  return match[2] === "" ? encoded.replace(/=+$/, "") === text : encoded === text + match[2];
}

/**
 * What OpenAPI shows of the rule: the prefix, then 32 to 86 base64 characters (24 to 64 bytes) and their padding.
 * Canonical encoding is checked by {@link isEndpointSecret} only.
 */
export const ENDPOINT_SECRET_PATTERN = `^${SECRET_PREFIX}[A-Za-z0-9+/]{${MIN_TEXT},${MAX_TEXT}}={0,2}$`;

/** The message of a refused secret, for the API's 422 and the admin's TypeError. */
export const ENDPOINT_SECRET_RULE = `secret must be ${SECRET_PREFIX} and the base64 of ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} bytes (a Standard Webhooks secret).`;
