import type { ResponseHeaders } from "../http/message";

/** A response kept for replay: status, the selected header fields, and the body bytes. */
export interface StoredResponse {
  readonly status: number;
  readonly headers: Readonly<ResponseHeaders>;
  readonly body: Uint8Array;
}

/**
 * What `begin` found, decided atomically by the store:
 * - `acquired`: no live record existed; one is now in progress under a fresh lease token;
 * - `in-progress`: another request holds a live lease;
 * - `completed`: a response is stored.
 * The fingerprint comparison is the pure core's ({@link decide}), not the store's.
 */
export type BeginResult =
  | { readonly kind: "acquired"; readonly leaseToken: string }
  | { readonly kind: "in-progress"; readonly fingerprint: string; readonly retryAfterMs: number }
  | { readonly kind: "completed"; readonly fingerprint: string; readonly response: StoredResponse };

/**
 * Where idempotency records live. Every implementation passes the same contract suite.
 *
 * A record is either in progress (fingerprint, lease token, lease expiry) or completed
 * (fingerprint, response, expiry). An expired record of either kind is as good as absent. A lease taken at `t` for
 * `leaseMs` is held while the store's clock reads less than `t + leaseMs`; from that instant it is no longer held, even
 * if nobody took the key over: `complete` and `release` with its token both return false (fencing). A store whose
 * writes join a database transaction may hold a lease longer, while that transaction is open and nobody else can take
 * the key over (PostgreSQL's `withClient`).
 *
 * Durations are positive integer numbers of milliseconds; any other value throws a `TypeError` naming the argument
 * before the store reads or writes anything. So does text no store can keep as given (a key, fingerprint, lease token
 * or kept header field holding U+0000 or a lone surrogate): a body is bytes, kept as they are.
 *
 * A store over the network returns promises; an in-process store may answer at once with the plain value (the
 * memory store does), and the middleware then adds no promise of its own. Callers `await` either.
 */
export interface IdempotencyStore {
  /**
   * Takes `key` for one request, atomically: when `key` has no live record, records it in progress
   * for `leaseMs` and returns `acquired` with a new lease token; otherwise returns the live record.
   *
   * @param key the scoped store key (`scopedKey(caller, key)`).
   * @param fingerprint the request's fingerprint, kept with the record for the 422 check and returned exactly as
   *   given: a store reads no length or form into it (`requestFingerprint` makes 46 ASCII characters, 0.1 made 43).
   * @param leaseMs how long the lease holds before a retry may take the key over: a positive integer of milliseconds.
   * @throws TypeError when `leaseMs` is not a positive integer (0, negative, fractional, NaN, Infinity), or `key` or
   *   `fingerprint` holds U+0000 or a lone surrogate.
   * @example
   * const found = await store.begin(key, fingerprint, 60_000);
   * if (found.kind === "acquired") runHandlerUnder(found.leaseToken);
   * @see https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/ ("Idempotency Enforcement")
   */
  begin(key: string, fingerprint: string, leaseMs: number): BeginResult | Promise<BeginResult>;
  /**
   * Stores the response for `ttlMs` if `leaseToken` still holds a live lease on `key` (fencing).
   *
   * @param key the key `begin` acquired.
   * @param leaseToken the token `begin` returned.
   * @param response what a retry will get back.
   * @param ttlMs how long the response is replayed: a positive integer of milliseconds.
   * @returns false when the lease expired or was taken over: nothing was written.
   * @throws TypeError when `ttlMs` is not a positive integer (0, negative, fractional, NaN, Infinity), or
   *   `response.status` is not an integer in 100..599, or `key`, `leaseToken` or a name or value of `response.headers`
   *   holds U+0000 or a lone surrogate.
   * @example await store.complete(key, found.leaseToken, toStoredResponse(response, names), 86_400_000)
   * @see https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/ ("Idempotency Key Validity and Expiry")
   */
  complete(key: string, leaseToken: string, response: StoredResponse, ttlMs: number): boolean | Promise<boolean>;
  /**
   * Deletes the in-progress record if `leaseToken` still holds a live lease on it, so a retry runs the handler.
   *
   * @param key the key `begin` acquired.
   * @param leaseToken the token `begin` returned.
   * @returns false when the lease expired (taken over or not, as for `complete`) or was never this token's: nothing
   * was deleted.
   * @throws TypeError when `key` or `leaseToken` holds U+0000 or a lone surrogate.
   * @example await store.release(key, found.leaseToken) // after a 5xx or a thrown error
   * @see https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/ ("Error Scenarios")
   */
  release(key: string, leaseToken: string): boolean | Promise<boolean>;
}
