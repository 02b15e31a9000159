import { createMemoryStore } from "./memory/memory-store";
import { compilePolicies, type PolicySet, type RateLimitPolicy } from "./policy";
import type { GcraOutcome, RateLimitStore } from "./store";
import { prefixOption } from "./store-key";

/** How one policy judged a request. */
export interface PolicyResult {
  readonly policy: RateLimitPolicy;
  /** Whether this policy alone would admit the request. */
  readonly allowed: boolean;
  /** Requests still available now under this policy (the draft's `r`). */
  readonly remaining: number;
  /**
   * Whole seconds within which no more than `remaining` requests can be admitted: until one more unit
   * frees up, rounded up; 0 when the allowance is full (the draft's effective window `t`).
   */
  readonly resetSeconds: number;
  /** Whole seconds until this policy admits a request again (0 when it would now). */
  readonly retryAfterSeconds: number;
}

/** The combined decision for a request under every policy of a limiter. */
export interface RateLimitDecision {
  /** True when every policy admits the request; only then is it counted, in all of them. */
  readonly allowed: boolean;
  /** Exact ms until a request would be admitted by every policy (0 when one would be now). */
  readonly retryAfterMs: number;
  /** One result per policy, in the order the policies were given. */
  readonly results: readonly PolicyResult[];
}

/** Options of {@link createRateLimiter}. */
export interface RateLimiterOptions {
  /** The policies every request must satisfy together, e.g. per second and per day. */
  policies: readonly RateLimitPolicy[];
  /** @default a new {@link createMemoryStore} */
  store?: RateLimitStore;
  /**
   * Prefixed to every key in the store. Give limiters that share a store prefixes none of which begins with another:
   * with "a:" and "a:b:", key "b:x" of the first is key "x" of the second, and the two spend one allowance.
   * @default "rl:"
   */
  prefix?: string;
}

/** Checks requests for a key against a set of policies. */
export interface RateLimiter {
  readonly policies: readonly RateLimitPolicy[];
  /** The compiled form the store sees. */
  readonly set: PolicySet;
  /**
   * Checks one request for `key` at `nowMs` (ms since the epoch) and counts it when admitted.
   * @param key the quota partition: an API key, a token subject, a client address.
   * @param nowMs the caller's clock (a Redis store with `clock: "server"` uses its own); a number beyond
   *   ±`Number.MAX_SAFE_INTEGER`, or not finite, rejects with a `TypeError`.
   * @example const decision = await limiter.check(apiKey, Date.now())
   */
  check(key: string, nowMs: number): Promise<RateLimitDecision>;
}

function policyResult(policy: RateLimitPolicy, allowed: boolean, left: number, reset: number): PolicyResult {
  const resetSeconds = Math.ceil(reset / 1000);
  // A policy with units left admits; one without refuses, and then its reset is the wait.
  return left > 0
    ? { policy, allowed: true, remaining: left, resetSeconds, retryAfterSeconds: 0 }
    : { policy, allowed, remaining: 0, resetSeconds, retryAfterSeconds: resetSeconds };
}

function toResults(policies: readonly RateLimitPolicy[], outcome: GcraOutcome): RateLimitDecision {
  const { allowed, remaining, resetMs } = outcome;
  if (policies.length === 1) {
    const left = remaining[0] as number;
    const reset = resetMs[0] as number;
    const results = [policyResult(policies[0] as RateLimitPolicy, allowed, left, reset)];
    return { allowed, retryAfterMs: left > 0 ? 0 : reset, results };
  }
  const results: PolicyResult[] = [];
  let retryAfterMs = 0;
  for (let i = 0; i < policies.length; i++) {
    const left = remaining[i] as number;
    const reset = resetMs[i] as number;
    if (left === 0 && reset > retryAfterMs) retryAfterMs = reset;
    results.push(policyResult(policies[i] as RateLimitPolicy, allowed, left, reset));
  }
  return { allowed, retryAfterMs, results };
}

/**
 * Creates a GCRA rate limiter over one or more policies, checked together: a request is admitted only
 * when every policy admits it, and only then counted, in all of them.
 * @param options the policies, the store (in memory by default, or `createRedisStore`) and the key prefix.
 * @returns a limiter whose `check(key, nowMs)` resolves to a {@link RateLimitDecision} value.
 * @throws TypeError when a policy is malformed, the store is not one, or the prefix is not a well-formed string.
 * @see docs/rate-limits.md, "The guarantee"
 * @example
 * const limiter = createRateLimiter({ policies: [{ name: "per-second", quota: 10, window: 1 }, { name: "daily", quota: 10_000, window: 86_400 }] })
 */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  if (!Array.isArray(options?.policies) || options.policies.length === 0) {
    throw new TypeError(
      'createRateLimiter: options.policies must be a non-empty list of policies, e.g. [{ name: "minute", quota: 100, window: 60 }]',
    );
  }
  if (options.store !== undefined && typeof options.store?.check !== "function") {
    throw new TypeError(
      "createRateLimiter: options.store must be a RateLimitStore (createMemoryStore, or the Redis store)",
    );
  }
  const set = compilePolicies(options.policies);
  const policies = Object.freeze([...options.policies]);
  const store = options.store ?? createMemoryStore();
  const prefix = prefixOption("createRateLimiter", options.prefix, "rl:");
  return {
    policies,
    set,
    check(key, nowMs) {
      if (typeof key !== "string") return Promise.reject(new TypeError("rate limit: key must be a string"));
      // GCRA is exact in integers below 2^53 only: past it `now + T` rounds back to `now`, and every request passes.
      const now = typeof nowMs === "number" ? Math.floor(nowMs) : Number.NaN;
      if (!Number.isSafeInteger(now)) {
        const got = typeof nowMs === "number" ? nowMs : typeof nowMs;
        const message = `rate limit: nowMs must be a finite number of ms within ±Number.MAX_SAFE_INTEGER, got ${got}`;
        return Promise.reject(new TypeError(message));
      }
      const storeKey = prefix + key;
      if (store.checkSync !== undefined) {
        try {
          return Promise.resolve(toResults(policies, store.checkSync(storeKey, set, now)));
        } catch (error) {
          return Promise.reject(error); // a key the store refuses (assertStoreKey) rejects, as with every store
        }
      }
      return store.check(storeKey, set, now).then((outcome) => toResults(policies, outcome));
    },
  };
}
