/**
 * Rate limits for API callers and webhook deliveries: GCRA over exact integer ticks, quota-per-window
 * policies with a burst, `RateLimit-Policy` / `RateLimit` fields (draft-ietf-httpapi-ratelimit-headers-11),
 * 429 problems with `Retry-After`, an in-memory store and a per-endpoint delivery pacer.
 * The Redis store is in `rest-webhooks/ratelimit/redis`.
 */
export { type ClientIpOptions, clientIp } from "./client-ip";
export {
  createEndpointRateLimiter,
  type EndpointRateLimiter,
  type EndpointRateLimiterOptions,
} from "./endpoint-limiter";
export { RateLimitError, type RateLimitErrorCode } from "./errors";
export type { GcraOutcome } from "./gcra";
export { policyField, rateLimitHeaders, retryAfterSeconds, serviceLimitField } from "./headers";
export {
  createRateLimiter,
  type PolicyResult,
  type RateLimitDecision,
  type RateLimiter,
  type RateLimiterOptions,
} from "./limiter";
export { createMemoryStore, type MemoryStore, type MemoryStoreOptions } from "./memory/memory-store";
export { type RateLimitOptions, rateLimit } from "./middleware";
export { compilePolicies, type GcraLimit, gcraLimit, type PolicySet, type RateLimitPolicy } from "./policy";
export { QUOTA_EXCEEDED_TYPE, quotaExceeded } from "./quota-exceeded";
export type { RateLimitStore } from "./store";
