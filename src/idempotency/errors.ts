/** Every stable code this module uses: the four problem codes of the middleware, its reports and the stores' own. */
export type IdempotencyErrorCode =
  /** 400: the Idempotency-Key field is empty, malformed or longer than 255 characters. */
  | "idempotency_key_invalid"
  /** 400: the route requires an Idempotency-Key and the request has none. */
  | "idempotency_key_missing"
  /** 409: a request with this key is still being processed (its lease has not expired). */
  | "idempotency_key_in_use"
  /** 422: the key was first used with a different request (method, target, caller or body). */
  | "idempotency_key_reused"
  /**
   * 503: the store failed in `begin`, or the `store` function threw or rejected, before the handler ran (its error is
   * reported through `onStoreError`): nothing was done, and the client may retry with the same key.
   */
  | "idempotency_store_unavailable"
  /** A store read a record it cannot decode (written by an incompatible version, or tampered with). */
  | "idempotency_record_invalid"
  /**
   * Reported through `onStoreError`: the lease ran out while the handler ran (`complete` or `release` answered
   * false), so nothing was recorded and a retry runs the handler again: `leaseMs` is shorter than the handler took.
   */
  | "idempotency_lease_lost"
  /** The memory store cannot hold this response under its `maxBytes`, whatever it evicts: nothing was stored. */
  | "idempotency_response_too_large"
  /** Records in progress (never evicted) leave the memory store no room under `maxBytes` for a response. */
  | "idempotency_store_full";

/**
 * The base error of the idempotency module; `code` is stable, the message is not.
 * The middleware answers the four request-level codes with problem responses and reports
 * `idempotency_lease_lost` through `onStoreError`; a store throws this error for `idempotency_record_invalid`, and the
 * memory store for `idempotency_response_too_large` and `idempotency_store_full` (from `complete`).
 */
export class IdempotencyError extends Error {
  readonly code: IdempotencyErrorCode;

  constructor(code: IdempotencyErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "IdempotencyError";
    this.code = code;
  }
}
