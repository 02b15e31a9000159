import { isLegacyFingerprint } from "./fingerprint-form";
import type { BeginResult, StoredResponse } from "./store";

/** A held lease: the store key and the token that fences late writers. */
export interface Lease {
  readonly key: string;
  readonly token: string;
}

/** What the middleware does with a request that carries a valid key. */
export type Decision =
  | { readonly kind: "execute"; readonly lease: Lease }
  | { readonly kind: "replay"; readonly response: StoredResponse }
  | { readonly kind: "conflict-in-progress"; readonly retryAfterMs: number }
  | { readonly kind: "fingerprint-mismatch" };

/**
 * Whether {@link decide} needs the request's legacy fingerprint for what `begin` found: only for a record that holds a
 * fingerprint in the form 0.1 wrote, so that the body is hashed a second time only for those.
 */
export function needsLegacyFingerprint(found: BeginResult): boolean {
  return found.kind !== "acquired" && isLegacyFingerprint(found.fingerprint);
}

// A record 0.1 wrote holds the legacy form, which leaves out Content-Type and Content-Encoding: it is compared with the
// request's legacy fingerprint, so that a retry after the upgrade is replayed rather than refused (422). Such records
// are gone within one TTL of the upgrade. Every other record is compared with the current fingerprint.
function sameRequest(stored: string, fingerprint: string, legacyFingerprint: string | undefined): boolean {
  if (legacyFingerprint !== undefined && isLegacyFingerprint(stored)) return stored === legacyFingerprint;
  return stored === fingerprint;
}

/**
 * Decides what the middleware does with a request, given what the store's `begin` found: run the
 * handler, replay, 409 or 422. A fingerprint mismatch wins over "in progress": retrying cannot fix it.
 *
 * @param key the scoped store key (`scopedKey`), kept in the lease.
 * @param fingerprint this request's fingerprint (`requestFingerprint`).
 * @param found what `begin` returned for `key`.
 * @param legacyFingerprint this request's fingerprint in the form 0.1 stored (method, target, caller and body only),
 *   compared instead of `fingerprint` with a record that holds that form. Without it every record is compared with
 *   `fingerprint`.
 * @example
 * decide(key, "fp-1", { kind: "in-progress", fingerprint: "fp-1", retryAfterMs: 800 })
 * // { kind: "conflict-in-progress", retryAfterMs: 800 }
 * @see https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/ ("Idempotency Enforcement"; "Error Scenarios": 409, 422)
 */
export function decide(key: string, fingerprint: string, found: BeginResult, legacyFingerprint?: string): Decision {
  switch (found.kind) {
    case "acquired":
      return { kind: "execute", lease: { key, token: found.leaseToken } };
    case "in-progress":
      if (!sameRequest(found.fingerprint, fingerprint, legacyFingerprint)) return { kind: "fingerprint-mismatch" };
      return { kind: "conflict-in-progress", retryAfterMs: found.retryAfterMs };
    case "completed":
      if (!sameRequest(found.fingerprint, fingerprint, legacyFingerprint)) return { kind: "fingerprint-mismatch" };
      return { kind: "replay", response: found.response };
  }
}
