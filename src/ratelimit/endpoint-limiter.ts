import { positiveInteger, positiveNumber } from "../options/number-option";
import { createMemoryStore } from "./memory/memory-store";
import { gcraLimit, type PolicySet } from "./policy";
import type { RateLimitStore } from "./store";
import { prefixOption } from "./store-key";

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
  /**
   * Prefixed to every endpoint id in the store. On a store other limiters share, no prefix may begin with another's.
   * @default "rl-endpoint:" (not "rl:…": a rate limiter's default "rl:" plus a client's key "endpoint:ep_1" would be
   * endpoint ep_1's key)
   */
  prefix?: string;
}

// A decimal rate as an integer quota per 1, 1000 or 1,000,000 s: 2.5/s is 2500 per 1000 s. (The numbers name the
// stored state, so these rates keep the state earlier versions wrote.)
function decimalRate(perSecond: number): [quota: number, seconds: number] | undefined {
  for (let seconds = 1; seconds <= 1_000_000; seconds *= 1000) {
    if (Number.isInteger(perSecond * seconds)) return [perSecond * seconds, seconds];
  }
  return undefined;
}

/**
 * Any other rate (1/3 per s, 1/86,400 per s) as the first convergent p/q of its continued fraction that equals it as a
 * double: the n/s the caller divided. Worked on the double's exact value (m / 2^k, in BigInt), so no step rounds.
 * When none fits the GCRA's exact range (burst · period within 2^53), the closest that does.
 */
function fractionRate(perSecond: number, burst: number): [quota: number, seconds: number] {
  let k = 0n;
  let m = perSecond;
  while (!Number.isInteger(m)) {
    m *= 2; // exact: only the exponent changes
    k++;
  }
  let [num, den] = [BigInt(m), 1n << k];
  let [p0, q0, p1, q1] = [0n, 1n, 1n, 0n];
  let fitting: [number, number] | undefined;
  let first: [number, number] | undefined;
  while (den !== 0n) {
    const a = num / den;
    [num, den] = [den, num - a * den];
    [p0, p1] = [p1, a * p1 + p0];
    [q0, q1] = [q1, a * q1 + q0];
    if (p1 === 0n) continue; // a rate below 1/s: the first convergent is 0/1
    const [p, q] = [Number(p1), Number(q1)];
    first ??= [p, q];
    if (burst * 1000 * q + p > Number.MAX_SAFE_INTEGER) break;
    fitting = [p, q];
    if (p / q === perSecond) break;
  }
  // Even the coarsest is out of range: gcraLimit says so.
  return fitting ?? (first as [number, number]);
}

// The rate as an exact integer quota per whole-ms period, which the GCRA's tick arithmetic keeps exact.
function rateLimitFor(perSecond: number, burst: number): PolicySet {
  positiveNumber("endpoint rate limit", "perSecond", perSecond);
  const [quota, seconds] = decimalRate(perSecond) ?? fractionRate(perSecond, burst);
  const limit = gcraLimit(quota, 1000 * seconds, burst);
  return { id: limit.id, limits: [limit] };
}

/**
 * Creates the per-endpoint delivery pacer the webhook delivery engine uses (GCRA, one TAT per endpoint).
 * A refusal carries the exact instant the next delivery to that endpoint will be admitted.
 * @param options the store (in memory by default), the burst (1: evenly spaced) and the key prefix.
 * @throws TypeError when `burst` is not a positive integer, `store` is not a store, or `prefix` is not a well-formed
 *   string.
 * @example
 * const pacer = createEndpointRateLimiter();
 * const slot = await pacer.acquire("ep_1", 5, Date.now()); // { allowed: true } or { allowed: false, retryAtMs }
 */
export function createEndpointRateLimiter(options: EndpointRateLimiterOptions = {}): EndpointRateLimiter {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("createEndpointRateLimiter: options must be an object");
  }
  // Checked here, not at the first acquire: a bad store, burst or prefix would otherwise fail every acquire.
  if (options.store !== undefined && typeof options.store?.check !== "function") {
    throw new TypeError(
      "createEndpointRateLimiter: options.store must be a RateLimitStore (createMemoryStore, the Redis or PostgreSQL store)",
    );
  }
  const store = options.store ?? createMemoryStore();
  const burst = positiveInteger("createEndpointRateLimiter", "burst", options.burst ?? 1);
  // Not "rl:endpoint:", which begins with createRateLimiter's default "rl:" (see the option).
  const prefix = prefixOption("createEndpointRateLimiter", options.prefix, "rl-endpoint:");
  const sets = new Map<number, PolicySet>();
  return {
    async acquire(endpointId, perSecond, nowMs) {
      if (typeof endpointId !== "string") throw new TypeError("endpoint rate limit: endpointId must be a string");
      // GCRA is exact in integers below 2^53 only: past it `now + T` rounds back to `now`, and every delivery passes.
      const now = typeof nowMs === "number" ? Math.floor(nowMs) : Number.NaN;
      if (!Number.isSafeInteger(now)) {
        const got = typeof nowMs === "number" ? nowMs : typeof nowMs;
        const within = "a finite number of ms within ±Number.MAX_SAFE_INTEGER";
        throw new TypeError(`endpoint rate limit: nowMs must be ${within}, got ${got}`);
      }
      let set = sets.get(perSecond);
      if (set === undefined) {
        set = rateLimitFor(perSecond, burst);
        if (sets.size >= 1024) sets.clear();
        sets.set(perSecond, set);
      }
      const outcome = await store.check(prefix + endpointId, set, now);
      if (outcome.allowed) return { allowed: true };
      return { allowed: false, retryAtMs: now + (outcome.resetMs[0] ?? 0) };
    },
  };
}
