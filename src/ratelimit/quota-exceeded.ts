import { HttpProblem } from "../http/problem";
import { rateLimitHeaders } from "./headers";
import type { RateLimitDecision } from "./limiter";

/** The problem type the draft registers for a request over quota (draft §5.1, §10.2.1). */
export const QUOTA_EXCEEDED_TYPE = "https://iana.org/assignments/http-problem-types#quota-exceeded";

/**
 * The 429 problem for a refused decision: RFC 9457 document of type quota-exceeded with the
 * `violated-policies` member (draft §5.1), `Retry-After` and the RateLimit fields.
 * @param decision a refused decision.
 * @param policyValue the precomputed `RateLimit-Policy` value; computed from the decision when omitted.
 * @throws TypeError for a decision that allowed the request: a 429 for it would say "retry after undefined seconds".
 * @example if (!decision.allowed) return quotaExceeded(decision).toResponse();
 */
export function quotaExceeded(decision: RateLimitDecision, policyValue?: string): HttpProblem {
  if (decision.allowed)
    throw new TypeError("quotaExceeded: the decision allowed the request; answer 429 only to a refused one");
  const violated = decision.results.filter((result) => !result.allowed).map((result) => result.policy.name);
  const headers = rateLimitHeaders(decision, policyValue);
  const wait = headers["retry-after"];
  return new HttpProblem({
    status: 429, // RFC 6585 §4
    code: "quota_exceeded",
    type: QUOTA_EXCEEDED_TYPE,
    title: "Quota Exceeded",
    detail: `Too many requests; retry after ${wait} ${wait === "1" ? "second" : "seconds"}.`,
    extensions: { "violated-policies": violated },
    headers,
  });
}
