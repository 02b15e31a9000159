/*
 * The two forms a stored request fingerprint takes. Pure: the decision reads the form without hashing anything.
 *
 * 0.1 stored 43 base64url characters, the SHA-256 of method, target, caller and body. Later versions store
 * FINGERPRINT_PREFIX and then 43 base64url characters, the SHA-256 that also covers Content-Type and Content-Encoding.
 * The prefix holds a "." (outside the base64url alphabet) and makes the value 46 characters long, so no value is in
 * both forms.
 */

/** What starts every fingerprint `requestFingerprint` makes: the version of what it covers. */
export const FINGERPRINT_PREFIX = "v2.";

const LEGACY = /^[A-Za-z0-9_-]{43}$/;

/**
 * Whether a stored fingerprint is in the form 0.1 wrote (43 base64url characters, no prefix): such a record is compared
 * with the request's legacy fingerprint, which leaves out Content-Type and Content-Encoding.
 */
export function isLegacyFingerprint(fingerprint: string): boolean {
  return LEGACY.test(fingerprint);
}
