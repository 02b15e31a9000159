/**
 * Idempotency keys for unsafe requests (draft-ietf-httpapi-idempotency-key-header): the pure core
 * (key parsing, fingerprints, the decision table, the middleware) and the in-memory store.
 * Shared stores live in `rest-webhooks/idempotency/redis` and `rest-webhooks/idempotency/postgres`.
 */
export { type Decision, decide, type Lease } from "./decision";
export { IdempotencyError, type IdempotencyErrorCode } from "./errors";
export { type FingerprintInput, requestFingerprint, scopedKey } from "./fingerprint";
export { MAX_KEY_LENGTH, type ParseKeyOptions, type ParseKeyResult, parseIdempotencyKey } from "./key";
export { MemoryIdempotencyStore, type MemoryStoreOptions } from "./memory";
export {
  DEFAULT_LEASE_MS,
  DEFAULT_TTL_MS,
  defaultStoreOutcome,
  type IdempotencyOptions,
  idempotency,
  logStoreError,
} from "./middleware";
export type { BeginResult, IdempotencyStore, StoredResponse } from "./store";
export { DEFAULT_REPLAY_HEADERS, REPLAYED_HEADER, replayResponse, toStoredResponse } from "./stored-response";
