import { WebhookVerificationError } from "./errors";

/** Accepted clock distance in seconds: one number for both directions, or each direction apart. */
export type Tolerance = number | { readonly past: number; readonly future: number };

/** A resolved tolerance window in seconds. */
export interface ToleranceWindow {
  readonly past: number;
  readonly future: number;
}

// Standard Webhooks (and Stripe, Slack): 5 minutes is the customary replay window.
const DEFAULT_TOLERANCE_SECONDS = 300;
const DEFAULT_WINDOW: ToleranceWindow = { past: DEFAULT_TOLERANCE_SECONDS, future: DEFAULT_TOLERANCE_SECONDS };

function seconds(value: unknown, what: string, caller: string): number {
  if (typeof value !== "number" || Number.isNaN(value) || value < 0) {
    throw new TypeError(`${caller}: ${what} must be a non-negative number of seconds (Infinity disables the check)`);
  }
  return value;
}

/** The window of `toleranceSeconds`; TypeError, named after `caller`, on a negative or non-numeric value. */
export function tolerance(value: Tolerance | undefined, caller = "verify"): ToleranceWindow {
  if (value === undefined) return DEFAULT_WINDOW;
  if (typeof value === "number") {
    const both = seconds(value, "toleranceSeconds", caller);
    return { past: both, future: both };
  }
  if (typeof value !== "object" || value === null) {
    throw new TypeError(`${caller}: toleranceSeconds must be a number or { past, future }`);
  }
  return {
    past: seconds(value.past, "toleranceSeconds.past", caller),
    future: seconds(value.future, "toleranceSeconds.future", caller),
  };
}

/**
 * `timestamp_too_old` / `timestamp_in_future` when the signed timestamp falls outside the window. Fails closed: the
 * comparisons are written so that a NaN clock (NaN compares false with everything) or an infinite one never passes.
 */
export function checkTimestamp(
  timestamp: number,
  nowMs: number,
  window: ToleranceWindow,
  scheme: string,
): WebhookVerificationError | undefined {
  const now = Math.floor(nowMs / 1000);
  if (!(now - timestamp <= window.past) || !Number.isFinite(now)) {
    return new WebhookVerificationError(
      "timestamp_too_old",
      `The signed timestamp ${timestamp} is ${now - timestamp} s old, beyond the ${window.past} s tolerance. Either this is a replay of an old delivery, the request was queued too long before verification, or this server's clock runs ahead (check NTP). Redelivering from the provider signs it afresh.`,
      { scheme },
    );
  }
  if (!(timestamp - now <= window.future)) {
    return new WebhookVerificationError(
      "timestamp_in_future",
      `The signed timestamp ${timestamp} is ${timestamp - now} s in the future, beyond the ${window.future} s tolerance. ${unitMistake(timestamp, nowMs, window) ?? "This server's clock is probably behind, or the sender's ahead (check NTP on both); a tolerance of { past, future } can allow more skew."}`,
      { scheme },
    );
  }
  return undefined;
}

const within = (seconds: number, now: number, window: ToleranceWindow) =>
  now - seconds <= window.past && seconds - now <= window.future;

/**
 * Why a timestamp far in the future would have been in the window, when that is the reason: milliseconds where
 * seconds belong, in the header or from `now()`. Telling either to check NTP sends the reader the wrong way.
 */
function unitMistake(timestamp: number, nowMs: number, window: ToleranceWindow): string | undefined {
  // Past 99,999,999,999 (the year 5138) a timestamp is milliseconds, as signers refuse it (scheme.ts).
  if (timestamp > 99_999_999_999 && within(Math.floor(timestamp / 1000), Math.floor(nowMs / 1000), window)) {
    return "It is a time in milliseconds: the sender must send Unix seconds (Math.floor(Date.now() / 1000)).";
  }
  if (within(timestamp, Math.floor(nowMs), window)) {
    return `The clock reads ${nowMs}, a time in seconds: now() must return milliseconds since the epoch, as Date.now() does.`;
  }
  return undefined;
}
