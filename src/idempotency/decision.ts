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
 * Decides what the middleware does with a request, given what the store's `begin` found: run the
 * handler, replay, 409 or 422. A fingerprint mismatch wins over "in progress": retrying cannot fix it.
 *
 * @param key the scoped store key (`scopedKey`), kept in the lease.
 * @param fingerprint this request's fingerprint (`requestFingerprint`).
 * @param found what `begin` returned for `key`.
 * @example
 * decide(key, "fp-1", { kind: "in-progress", fingerprint: "fp-1", retryAfterMs: 800 })
 * // { kind: "conflict-in-progress", retryAfterMs: 800 }
 * @see https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/ ("Idempotency Enforcement"; "Error Scenarios": 409, 422)
 */
export function decide(key: string, fingerprint: string, found: BeginResult): Decision {
  switch (found.kind) {
    case "acquired":
      return { kind: "execute", lease: { key, token: found.leaseToken } };
    case "in-progress":
      if (found.fingerprint !== fingerprint) return { kind: "fingerprint-mismatch" };
      return { kind: "conflict-in-progress", retryAfterMs: found.retryAfterMs };
    case "completed":
      if (found.fingerprint !== fingerprint) return { kind: "fingerprint-mismatch" };
      return { kind: "replay", response: found.response };
  }
}
