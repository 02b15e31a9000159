import { nonNegativeNumber, positiveInteger } from "../../options/number-option";

/**
 * The one retry family of the webhook modules, used by the delivery worker (provider side) and the webhook
 * processor (consumer side).
 */

/** The Standard Webhooks schedule: immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (8 attempts, ~27.6 h). */
export const STANDARD_WEBHOOKS_SCHEDULE: readonly number[] = [
  0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
];

/**
 * The retry decision: given how many attempts were made (≥ 1) and a random source in [0, 1), the delay in ms before
 * the next attempt, or `undefined` when there is none left. The delivery worker reads an answer that is not a finite
 * number as `undefined`, and cuts a delay longer than `DELIVERY_DEFAULTS.maxRetryDelayMs` (365 days) to it.
 */
export type RetryPolicy = (attempts: number, random: () => number) => number | undefined;

/** A schedule policy also tells the delay of the first attempt and the most any delay can be. */
export interface SchedulePolicy extends RetryPolicy {
  /** Delay of the first attempt after publishing, in ms (before jitter). */
  readonly firstDelayMs: number;
  /** The largest delay the policy can return. */
  readonly capMs: number;
  /** Attempts in total, the first included. */
  readonly maxAttempts: number;
}

function assertDelays(delays: readonly number[]): void {
  if (delays.length === 0 || delays.some((d) => !Number.isFinite(d) || d < 0)) {
    throw new TypeError("A retry schedule needs at least one finite, non-negative delay.");
  }
}

/**
 * A fixed schedule with jitter: attempt n+1 waits `delays[n]` ± `jitter` (a fraction).
 * @param delays delay before each attempt, the first one included (`delays.length` attempts in total)
 * @default delays the Standard Webhooks schedule (0, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), jitter 0.2
 * @example scheduleBackoff([0, 10, 10]) // three attempts, 10 ms apart (tests)
 */
export function scheduleBackoff(delays: readonly number[] = STANDARD_WEBHOOKS_SCHEDULE, jitter = 0.2): SchedulePolicy {
  assertDelays(delays);
  if (!(jitter >= 0 && jitter <= 1)) throw new TypeError("jitter must be within [0, 1].");
  const table = [...delays];
  const policy: RetryPolicy = (attempts, random) => {
    const base = table[attempts];
    if (base === undefined) return undefined;
    return Math.round(base * (1 + jitter * (2 * random() - 1)));
  };
  return Object.assign(policy, {
    firstDelayMs: table[0] as number,
    capMs: Math.ceil(Math.max(...table) * (1 + jitter)),
    maxAttempts: table.length,
  });
}

/** Options of {@link exponentialBackoff}. */
export interface ExponentialBackoffOptions {
  /** The delay after the first failure, before jitter. @default 1000 */
  baseMs?: number;
  /** Growth per attempt. @default 2 */
  factor?: number;
  /** The largest delay. @default 3_600_000 (1 h) */
  capMs?: number;
  /** Attempts in total, the first included. @default 8 */
  maxAttempts?: number;
  /** `"full"`: a uniform delay in [0, computed] (spreads retries of failures that happened together); `"none"`. @default "full" */
  jitter?: "full" | "none";
}

/**
 * Exponential backoff: after failure n, min(cap, base·factor^(n-1)), with full jitter by default.
 * @see https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/
 * @example exponentialBackoff({ baseMs: 500, maxAttempts: 5 })
 */
export function exponentialBackoff(options: ExponentialBackoffOptions = {}): SchedulePolicy {
  const owner = "exponentialBackoff";
  // Finite, every one: a cap of Infinity let the delay grow to 5.76e20 ms at attempt 60, past what a queue stores.
  const baseMs = nonNegativeNumber(owner, "baseMs", options.baseMs ?? 1_000, "milliseconds");
  const capMs = nonNegativeNumber(owner, "capMs", options.capMs ?? 3_600_000, "milliseconds");
  const maxAttempts = positiveInteger(owner, "maxAttempts", options.maxAttempts ?? 8);
  const factor = options.factor ?? 2;
  if (typeof factor !== "number" || !Number.isFinite(factor) || factor < 1) {
    throw new TypeError(`${owner}: factor must be a finite number of 1 or more, got ${String(factor)}.`);
  }
  const jitter = options.jitter ?? "full";
  if (jitter !== "full" && jitter !== "none") {
    throw new TypeError(`${owner}: jitter must be "full" or "none", got ${JSON.stringify(jitter)}.`);
  }
  const policy: RetryPolicy = (attempts, random) => {
    if (attempts >= maxAttempts) return undefined;
    // factor ** n overflows to Infinity long before the cap matters; 0 × Infinity would be NaN.
    const ceiling = baseMs === 0 ? 0 : Math.min(capMs, baseMs * factor ** (attempts - 1));
    return jitter === "full" ? Math.floor(random() * ceiling) : ceiling;
  };
  return Object.assign(policy, { firstDelayMs: 0, capMs, maxAttempts });
}

/** The default policy: the Standard Webhooks schedule with ±20 % jitter. */
export const standardWebhooksBackoff: SchedulePolicy = scheduleBackoff();
