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
 * The decision table of draft-ietf-httpapi-idempotency-key-header §2.6–2.7, applied to what the
 * store's `begin` found. A fingerprint mismatch wins over "in progress": retrying cannot fix it.
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
