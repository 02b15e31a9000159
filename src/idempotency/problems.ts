import type { HttpResponse } from "../http/message";
import { HttpProblem } from "../http/problem";

/** 400 `idempotency_key_invalid` (draft-ietf-httpapi-idempotency-key-header §2.7). */
export function keyInvalid(reason: string): HttpResponse {
  return new HttpProblem({ status: 400, code: "idempotency_key_invalid", detail: reason }).toResponse();
}

/** 400 `idempotency_key_missing` (draft §2.7: the key is required for this resource). */
export function keyMissing(): HttpResponse {
  return new HttpProblem({
    status: 400,
    code: "idempotency_key_missing",
    detail: "This request requires an Idempotency-Key header field.",
  }).toResponse();
}

const MAX_DELAY_SECONDS = 2_147_483_647;

/** 409 `idempotency_key_in_use` with Retry-After (draft §2.7: concurrent request with the same key). */
export function keyInUse(retryAfterMs: number): HttpResponse {
  // RFC 9110 §10.2.3: Retry-After as delay-seconds (1*DIGIT), rounded up so a client never comes back early. Capped
  // at 2^31 - 1 (RFC 9111 §1.2.2's bound for delta-seconds): from 1e21 String() writes an exponent, no delay-seconds.
  const seconds = Math.min(MAX_DELAY_SECONDS, Math.max(1, Math.ceil(retryAfterMs / 1000)));
  return new HttpProblem({
    status: 409,
    code: "idempotency_key_in_use",
    detail: "A request with this Idempotency-Key is still being processed; retry later.",
    headers: { "retry-after": String(seconds) },
  }).toResponse();
}

/** 422 `idempotency_key_reused` (draft §2.7: the key was used with a different request payload). */
export function keyReused(): HttpResponse {
  return new HttpProblem({
    status: 422,
    code: "idempotency_key_reused",
    detail: "This Idempotency-Key was already used with a different request.",
  }).toResponse();
}

/**
 * 503 `idempotency_store_unavailable` with Retry-After: the store failed before the handler ran, so nothing happened
 * and the same request may be sent again (RFC 9110 §15.6.4: a temporary condition; §10.2.3: Retry-After).
 */
export function storeUnavailable(): HttpResponse {
  return new HttpProblem({
    status: 503,
    code: "idempotency_store_unavailable",
    detail: "The idempotency store could not be reached; nothing was done. Retry the request with the same key.",
    headers: { "retry-after": "1" },
  }).toResponse();
}
