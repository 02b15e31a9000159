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

/** 409 `idempotency_key_in_use` with Retry-After (draft §2.7: concurrent request with the same key). */
export function keyInUse(retryAfterMs: number): HttpResponse {
  // RFC 9110 §10.2.3: Retry-After as delay-seconds, rounded up so a client never comes back early.
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
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
