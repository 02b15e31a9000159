import { positiveNumber } from "../options/number-option";
import { createMemoryStore } from "./memory/memory-store";
import { gcraLimit, type PolicySet } from "./policy";
import type { RateLimitStore } from "./store";

/** Paces webhook deliveries per endpoint, at each endpoint's own rate. */
export interface EndpointRateLimiter {
  /** Ask to send one delivery to `endpointId` at `nowMs`, given the endpoint's own rate (deliveries per second). */
  acquire(
    endpointId: string,
    perSecond: number,
    nowMs: number,
  ): Promise<{ allowed: true } | { allowed: false; retryAtMs: number }>;
}

/** Options of {@link createEndpointRateLimiter}. */
export interface EndpointRateLimiterOptions {
  /** @default a new in-memory store */
  store?: RateLimitStore;
  /**
   * Deliveries that may go out back to back after an idle spell.
   * @default 1: deliveries are evenly spaced, one every `1 / perSecond` s.
   */
  burst?: number;
  /** @default "rl:endpoint:" */
  prefix?: string;
}

// The rate as an exact integer quota per period: 2.5/s is 2500 per 1000 s.
function rateLimitFor(perSecond: number, burst: number): PolicySet {
  positiveNumber("endpoint rate limit", "perSecond", perSecond);
  let scale = 1;
  while (!Number.isInteger(perSecond * scale) && scale < 1_000_000) scale *= 1000;
  const quota = Math.max(1, Math.round(perSecond * scale));
  const limit = gcraLimit(quota, 1000 * scale, burst);
  return { id: limit.id, limits: [limit] };
}

/**
 * Creates the per-endpoint delivery pacer the webhook delivery engine uses (GCRA, one TAT per endpoint).
 * A refusal carries the exact instant the next delivery to that endpoint will be admitted.
 * @param options the store (in memory by default), the burst (1: evenly spaced) and the key prefix.
 * @example
 * const pacer = createEndpointRateLimiter();
 * const slot = await pacer.acquire("ep_1", 5, Date.now()); // { allowed: true } or { allowed: false, retryAtMs }
 */
export function createEndpointRateLimiter(options: EndpointRateLimiterOptions = {}): EndpointRateLimiter {
  const store = options.store ?? createMemoryStore();
  const burst = options.burst ?? 1;
  const prefix = options.prefix ?? "rl:endpoint:";
  const sets = new Map<number, PolicySet>();
  return {
    async acquire(endpointId, perSecond, nowMs) {
      if (typeof endpointId !== "string") throw new TypeError("endpoint rate limit: endpointId must be a string");
      if (!Number.isFinite(nowMs)) throw new TypeError("endpoint rate limit: nowMs must be a finite number");
      let set = sets.get(perSecond);
      if (set === undefined) {
        set = rateLimitFor(perSecond, burst);
        if (sets.size >= 1024) sets.clear();
        sets.set(perSecond, set);
      }
      const now = Math.floor(nowMs);
      const outcome = await store.check(prefix + endpointId, set, now);
      if (outcome.allowed) return { allowed: true };
      return { allowed: false, retryAtMs: now + (outcome.resetMs[0] ?? 0) };
    },
  };
}
