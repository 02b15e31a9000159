/**
 * The RateLimit-Policy and RateLimit fields of draft-ietf-httpapi-ratelimit-headers-11 (23 May 2026),
 * and Retry-After. Both fields are Structured Field Lists (RFC 9651 §3.1) of String items:
 *   RateLimit-Policy: "default";q=100;w=10     (§3.1: q quota, w window in seconds, Integers)
 *   RateLimit: "default";r=50;t=30             (§4.1: r available quota, t effective window, Integers)
 * The syntax is the same as in -10; -11 renamed r ("remaining" → "available quota") and t ("reset" →
 * "effective window": seconds within which the client can use no more than r), which is how t is computed here.
 */
import { item, serializeList } from "../http/structured-fields";
import type { RateLimitDecision } from "./limiter";
import type { RateLimitPolicy } from "./policy";

/**
 * The `RateLimit-Policy` field value: one Quota Policy Item per policy (draft §3). `q`/`w` state the
 * sustained rate; the burst is not advertised (see docs/rate-limits.md, "The guarantee").
 * @param policies the limiter's policies, in order.
 * @example policyField([{ name: "default", quota: 100, window: 10 }]) // '"default";q=100;w=10'
 */
export function policyField(policies: readonly RateLimitPolicy[]): string {
  // Draft §3.1: the item is a String naming the policy; q (§3.1.1) and w (§3.1.3) are Integers.
  return serializeList(policies.map((policy) => item(policy.name, { q: policy.quota, w: policy.window })));
}

/**
 * The `RateLimit` field value: one Service Limit Item per policy (draft §4).
 * @param decision a limiter's decision; one item per policy result.
 * @example serviceLimitField(decision) // '"default";r=50;t=30'
 */
export function serviceLimitField(decision: RateLimitDecision): string {
  // Draft §4.1.1 r: available quota; §4.1.2 t: effective window in delay-seconds.
  return serializeList(
    decision.results.map((result) => item(result.policy.name, { r: result.remaining, t: result.resetSeconds })),
  );
}

/**
 * The `Retry-After` value for a refused decision, in delay-seconds (RFC 9110 §10.2.3), rounded up so that a
 * request sent then is admitted (when nothing else consumed the allowance meanwhile).
 * @param decision a limiter's decision; its `retryAfterMs` is rounded up to whole seconds, at least 1.
 * @example retryAfterSeconds({ allowed: false, retryAfterMs: 1_200, results }) // 2
 */
export function retryAfterSeconds(decision: RateLimitDecision): number {
  return Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
}

/**
 * Response header fields for a decision: `ratelimit-policy`, `ratelimit`, and `retry-after` when refused.
 * @param decision a limiter's decision.
 * @param policyValue the precomputed `RateLimit-Policy` value; computed from the decision's policies when omitted.
 * @example return { ...response, headers: { ...response.headers, ...rateLimitHeaders(decision) } };
 */
export function rateLimitHeaders(decision: RateLimitDecision, policyValue?: string): Record<string, string> {
  const headers: Record<string, string> = {
    "ratelimit-policy": policyValue ?? policyField(decision.results.map((result) => result.policy)),
    ratelimit: serviceLimitField(decision),
  };
  if (!decision.allowed) headers["retry-after"] = String(retryAfterSeconds(decision));
  return headers;
}
