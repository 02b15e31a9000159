/**
 * Quota policies ("q units per w seconds", with a burst) and their compiled GCRA form.
 */

import { positiveInteger } from "../options/number-option";

/**
 * A quota policy: a sustained rate of `quota` requests per `window` seconds, `burst` of them at once.
 * Exactly: in any `window` seconds (a half-open interval) at most `burst + quota − 1` requests are
 * admitted, and a client that never sends more than `quota` in any `window` seconds is never refused
 * as long as `burst ≥ quota` (the default). `RateLimit-Policy` advertises `q=quota;w=window`.
 * @example { name: "per-minute", quota: 100, window: 60 }
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-11#section-3.1
 * @see docs/rate-limits.md, "The guarantee"
 */
export interface RateLimitPolicy {
  /** Names the policy in the `RateLimit-Policy` and `RateLimit` fields (an sf-string: printable ASCII). */
  readonly name: string;
  /** Requests allowed per window (draft §3.1.1 `q`): a positive integer of at most 15 digits (an sf-integer). */
  readonly quota: number;
  /** The window in whole seconds (draft §3.1.3 `w`: "Sub-second precision is not supported"), at most 15 digits. */
  readonly window: number;
  /**
   * Requests that may be sent at once from a full allowance (the GCRA tolerance): at most 999,999,999,999,999, as
   * `RateLimit`'s `r` (draft §4.1.1), up to the burst, is an sf-integer.
   * @default quota: a whole window's quota can be spent at once, and a client that keeps to the
   * advertised `q` per `w` is never refused; a window can then admit up to `2 · quota − 1`. Set `1`
   * for "never more than `quota` in any window" (evenly spaced requests, no burst).
   */
  readonly burst?: number;
}

/**
 * One GCRA limit in integer units. Time is counted in ticks of `1/quota` ms, so the emission interval
 * `window / quota` is exactly `periodMs` ticks and all arithmetic stays in exact integers; a limit for which
 * `burst · periodMs + quota` passes 2^53 − 1 counts in ticks of `g/quota` ms instead, `g = gcd(quota, periodMs)`.
 * @see docs/rate-limits.md, "Exact arithmetic"
 */
export interface GcraLimit {
  /** `quota:periodMs:burst`; state written under other numbers carries over by window (`carryState`). */
  readonly id: string;
  /** Units per period: a positive integer. */
  readonly quota: number;
  /** The period in ms. */
  readonly periodMs: number;
  /** Units that can be taken at once from a full allowance: a positive integer. */
  readonly burst: number;
  /** Ticks per ms, the unit of the stored state's sub-ms part: `quota`, or `quota / g` when reduced. */
  readonly ticksPerMs: number;
  /** The emission interval `periodMs / quota` ms in ticks: `periodMs`, or `periodMs / g` when reduced. */
  readonly intervalTicks: number;
}

/** Policies compiled for a store: the limits checked together, under one signature. */
export interface PolicySet {
  /** The limits' ids joined by ",": changes when any number changes (names do not matter to state). */
  readonly id: string;
  readonly limits: readonly GcraLimit[];
}

const PRINTABLE = /^[\x20-\x7e]*$/;

// RFC 9651 §3.3.1: an Integer has at most 15 decimal digits.
const SF_INTEGER_MAX = 999_999_999_999_999;

/**
 * `value` when the headers can send it: `q` and `w` are Integers (draft §3.1), so a larger one would make every
 * `RateLimit-Policy` throw; so is `r` (§4.1), at most the burst, which reduced ticks let reach 2^53 where T is one
 * tick. `t` stays far below: in seconds the time between two instants within ±2^53 ms.
 */
function sfInteger(name: string, value: number, field = "RateLimit-Policy"): number {
  if (value > SF_INTEGER_MAX) {
    const why = `${field} sends it as an Integer, RFC 9651 §3.3.1`;
    throw new TypeError(`rate limit: ${name} must be at most ${SF_INTEGER_MAX} (${why}), got ${value}.`);
  }
  return value;
}

// The window is kept in ms (GcraLimit.periodMs), whose arithmetic is exact below 2^53: 9,007,199,254,740 s at most.
const MAX_WINDOW = Math.floor(Number.MAX_SAFE_INTEGER / 1000);

/** `window` when its ms are a safe integer; past that gcraLimit refused "period", an option a policy does not have. */
function windowMs(window: number): number {
  if (window > MAX_WINDOW) {
    const why = "its ms must be below 2^53 to be counted exactly";
    throw new TypeError(`rate limit: window must be at most ${MAX_WINDOW} seconds (${why}), got ${window}.`);
  }
  return window * 1000;
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b]; // % is exact on safe integers
  return a;
}

/**
 * `[ticksPerMs, intervalTicks]` of a limit: ticks of 1/quota ms when `burst · periodMs + quota` fits below 2^53 (so
 * every limit accepted before keeps the state it stored), else ticks of g/quota ms, g = gcd(quota, periodMs), which
 * only limits refused before use; `undefined` when even those pass 2^53 − 1. The Redis script computes the same.
 */
export function tickUnits(quota: number, periodMs: number, burst: number): [number, number] | undefined {
  // Tick arithmetic reaches burst·T (+ ticksPerMs). A sum past 2^53 − 1 rounds to 2^53 or more: each test is exact.
  if (burst * periodMs + quota <= Number.MAX_SAFE_INTEGER) return [quota, periodMs];
  const g = gcd(quota, periodMs);
  const [ticksPerMs, intervalTicks] = [quota / g, periodMs / g];
  return burst * intervalTicks + ticksPerMs <= Number.MAX_SAFE_INTEGER ? [ticksPerMs, intervalTicks] : undefined;
}

/**
 * Builds and checks a {@link GcraLimit}.
 * @param quota units per period (a positive integer).
 * @param periodMs the period in ms (a positive integer).
 * @param burst units that can be taken at once (a positive integer).
 * @throws TypeError when a parameter is not a positive integer or the tolerance exceeds exact double range even in
 *   ticks of gcd(quota, periodMs)/quota ms.
 * @example gcraLimit(100, 60_000, 100) // 100 per minute, all at once from a full allowance
 * @example gcraLimit(10_000_000, 2_592_000_000, 10_000_000).intervalTicks // 1296: ticks of 1/5 ms
 */
export function gcraLimit(quota: number, periodMs: number, burst: number): GcraLimit {
  positiveInteger("rate limit", "quota", quota);
  positiveInteger("rate limit", "period", periodMs);
  positiveInteger("rate limit", "burst", burst);
  const units = tickUnits(quota, periodMs, burst);
  if (units === undefined) {
    // The numbers and the remedy: a policy that sets no burst (10,000,019 a month) did not know it had one.
    const g = gcd(quota, periodMs);
    const sum = `burst ${burst} × (period ${periodMs} ms / ${g}) + quota ${quota} / ${g}`;
    const where = `where ${g} = gcd(quota, period)`;
    const remedy = "lower the burst (it defaults to the quota), or take a quota sharing more factors with the period";
    throw new TypeError(`rate limit: ${sum}, ${where}, must be at most 2^53 − 1 to be computed exactly; ${remedy}.`);
  }
  const [ticksPerMs, intervalTicks] = units;
  return { id: `${quota}:${periodMs}:${burst}`, quota, periodMs, burst, ticksPerMs, intervalTicks };
}

/**
 * Checks policies and compiles them for a store.
 * @param policies one or more policies with distinct printable-ASCII names.
 * @throws TypeError on an empty list, a duplicate or non-ASCII name, or a bad number: a quota, window or burst above
 *   999,999,999,999,999, which the headers cannot send (RFC 9651 §3.3.1), and a window above 9,007,199,254,740 s,
 *   whose ms are not exact, included.
 * @example compilePolicies([{ name: "per-second", quota: 10, window: 1 }]).id // "10:1000:10"
 */
export function compilePolicies(policies: readonly RateLimitPolicy[]): PolicySet {
  if (!Array.isArray(policies) || policies.length === 0) {
    throw new TypeError("rate limit: at least one policy is required");
  }
  const names = new Set<string>();
  const limits = policies.map((policy) => {
    if (typeof policy.name !== "string" || !PRINTABLE.test(policy.name)) {
      // Draft §3: the item value is an sf-string, RFC 9651 §3.3.3: printable ASCII only.
      throw new TypeError(`rate limit: policy name must be printable ASCII, got ${JSON.stringify(policy.name)}`);
    }
    if (names.has(policy.name)) throw new TypeError(`rate limit: duplicate policy name "${policy.name}"`);
    names.add(policy.name);
    const quota = sfInteger("quota", positiveInteger("rate limit", "quota", policy.quota));
    const window = sfInteger("window", positiveInteger("rate limit", "window", policy.window));
    const limit = gcraLimit(quota, windowMs(window), policy.burst ?? quota);
    // Draft §4.1.1: r is an Integer, and up to the burst (a request refused by another policy leaves it whole).
    sfInteger("burst", limit.burst, "RateLimit (r, up to the burst)");
    return limit;
  });
  return { id: limits.map((limit) => limit.id).join(","), limits };
}
