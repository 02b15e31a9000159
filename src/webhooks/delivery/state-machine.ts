import { type RetryPolicy, type SchedulePolicy, standardWebhooksBackoff } from "../retry/backoff";
import { policyDelay } from "../retry/policy-delay";
import type { AttemptResult, DeliveryErrorKind } from "./attempt";
import { isSuccessStatus } from "./attempt";
import { DELIVERY_DEFAULTS } from "./defaults";

/**
 * Where a delivery (one event to one endpoint) stands.
 * - `pending`: due at `nextAttemptAt` (first attempt, a manual retry, or a deferred one)
 * - `failed`: the last attempt failed; the next is scheduled at `nextAttemptAt`
 * - `delivered`: a 2xx arrived; terminal, never retried
 * - `exhausted`: no attempt left (or the endpoint is gone/disabled); kept, can be retried by hand
 */
export type DeliveryStatus = "pending" | "failed" | "delivered" | "exhausted";

/** Every {@link DeliveryStatus}, for schemas. */
export const DELIVERY_STATUSES = [
  "pending",
  "failed",
  "delivered",
  "exhausted",
] as const satisfies readonly DeliveryStatus[];

/** The state of one delivery; a plain value the queues store. */
export interface DeliveryState {
  readonly status: DeliveryStatus;
  /** Attempts made in the current schedule (a manual retry starts a fresh schedule). */
  readonly attempts: number;
  /** Epoch ms when the next attempt is due; `null` when terminal. */
  readonly nextAttemptAt: number | null;
  readonly lastAttemptAt: number | null;
  readonly lastStatus: number | null;
  readonly lastErrorKind: DeliveryErrorKind | null;
  readonly deliveredAt: number | null;
}

/** What happens to a delivery. */
export type DeliveryEvent =
  /** An attempt finished with this result. */
  | { type: "attempt"; result: AttemptResult }
  /** The attempt could not be made now (circuit open, rate limit, endpoint busy): wait, no attempt counted. */
  | { type: "defer"; until: number }
  /** The endpoint is disabled or deleted: park the delivery as exhausted. */
  | { type: "endpoint_disabled" }
  /** An operator asks for it again now, with a fresh schedule. */
  | { type: "manual_retry" };

/** Side effects the caller carries out, as plain values. */
export type DeliveryEffect =
  | { type: "schedule"; at: number }
  | { type: "disable_endpoint"; reason: "gone" | "url_refused" }
  | { type: "notify"; event: "delivery.delivered" | "delivery.failed" | "delivery.exhausted" };

/** The outcome of {@link transition}. */
export interface Transition {
  state: DeliveryState;
  effects: DeliveryEffect[];
}

/** Tunables of the state machine. */
export interface DeliveryConfig {
  /** @default the Standard Webhooks schedule with ±20 % jitter */
  retry: RetryPolicy;
  /** Random source in [0, 1) for jitter. @default Math.random */
  random: () => number;
  /** A `Retry-After` stretches the scheduled delay to at most this factor (see `retryAfterFloorMs`). @default 2 */
  retryAfterFactor: number;
  /**
   * A `Retry-After` may always stretch the delay up to this many ms, however short the scheduled delay (full jitter
   * can draw 0). The schedule's `capMs`, when the policy has one, still bounds it. @default 60_000
   */
  retryAfterFloorMs?: number;
  /**
   * Whether a failed attempt may be retried at all. A 410 Gone never gets here: it ends the delivery and disables
   * the endpoint (Standard Webhooks); nor does a `url_refused` error, which disables the endpoint and parks the
   * delivery for its re-enabling. @default every failure
   */
  retryable: (result: AttemptResult) => boolean;
}

/** The default configuration (see {@link DELIVERY_DEFAULTS}). */
export const defaultDeliveryConfig: DeliveryConfig = {
  retry: standardWebhooksBackoff,
  random: Math.random,
  retryAfterFactor: DELIVERY_DEFAULTS.retryAfterFactor,
  retryAfterFloorMs: DELIVERY_DEFAULTS.retryAfterFloorMs,
  retryable: () => true,
};

/** The state of a fresh delivery, due at `dueAt`. */
export function initialDeliveryState(dueAt: number): DeliveryState {
  return {
    status: "pending",
    attempts: 0,
    nextAttemptAt: dueAt,
    lastAttemptAt: null,
    lastStatus: null,
    lastErrorKind: null,
    deliveredAt: null,
  };
}

/** Whether the delivery is waiting for an attempt. */
export function isScheduled(state: DeliveryState): boolean {
  return state.status === "pending" || state.status === "failed";
}

/** Whether the delivery is waiting for an attempt due by `at` (epoch ms). */
export function isDueBy(state: DeliveryState, at: number): boolean {
  return isScheduled(state) && (state.nextAttemptAt ?? Number.POSITIVE_INFINITY) <= at;
}

/**
 * The delay before the next attempt. A 429 or 503 with Retry-After is honoured (RFC 9110 §10.2.3, RFC 6585 §4) but
 * bounded, so the schedule's total stays bounded: never shorter than scheduled, at most max(factor × scheduled,
 * floor), and never beyond the policy's `capMs` (its largest delay) unless the scheduled delay itself is.
 */
function retryDelay(result: AttemptResult, scheduled: number, config: DeliveryConfig): number {
  if (result.kind !== "response" || result.retryAfterMs === undefined) return scheduled;
  if (result.status !== 429 && result.status !== 503) return scheduled;
  // A custom dispatcher's delay that is no number of 0 or more (NaN from a date it could not parse) asks for nothing:
  // it would make the due time NaN, which no queue stores, and the attempt go out again at every lease end.
  if (!(typeof result.retryAfterMs === "number" && result.retryAfterMs >= 0)) return scheduled;
  const cap = (config.retry as Partial<SchedulePolicy>).capMs ?? Number.POSITIVE_INFINITY;
  const bound = Math.min(
    Math.max(scheduled * config.retryAfterFactor, config.retryAfterFloorMs ?? DELIVERY_DEFAULTS.retryAfterFloorMs),
    cap,
  );
  return Math.max(scheduled, Math.min(result.retryAfterMs, bound));
}

// Plain literals, no spreads or closures: this runs once per attempt on the worker's hot path.
function attempted(
  status: DeliveryStatus,
  attempts: number,
  now: number,
  result: AttemptResult,
  nextAttemptAt: number | null,
  lastErrorKind: DeliveryErrorKind | null,
): DeliveryState {
  return {
    status,
    attempts,
    nextAttemptAt,
    lastAttemptAt: now,
    lastStatus: result.status ?? null,
    lastErrorKind,
    deliveredAt: status === "delivered" ? now : null,
  };
}

/** The last error kind of a delivery parked while its endpoint was disabled (the `endpoint_disabled` event, or
 * a `url_refused` attempt). */
export const PARKED_ERROR_KIND: DeliveryErrorKind = "endpoint_disabled";

const NOTIFY_DELIVERED: DeliveryEffect = Object.freeze({ type: "notify", event: "delivery.delivered" });
const NOTIFY_FAILED: DeliveryEffect = Object.freeze({ type: "notify", event: "delivery.failed" });
const NOTIFY_EXHAUSTED: DeliveryEffect = Object.freeze({ type: "notify", event: "delivery.exhausted" });
const DISABLE_GONE: DeliveryEffect = Object.freeze({ type: "disable_endpoint", reason: "gone" });
const DISABLE_URL_REFUSED: DeliveryEffect = Object.freeze({ type: "disable_endpoint", reason: "url_refused" });

function afterAttempt(state: DeliveryState, result: AttemptResult, now: number, config: DeliveryConfig): Transition {
  const attempts = state.attempts + 1;
  if (result.kind === "response" && isSuccessStatus(result.status)) {
    return { state: attempted("delivered", attempts, now, result, null, null), effects: [NOTIFY_DELIVERED] };
  }
  const kind: DeliveryErrorKind = result.kind === "error" ? result.errorKind : "http_status";
  // Standard Webhooks, "Retry schedule": a 410 Gone means the endpoint is gone for good; disable it.
  if (result.kind === "response" && result.status === 410) {
    return {
      state: attempted("exhausted", attempts, now, result, null, kind),
      effects: [DISABLE_GONE, NOTIFY_EXHAUSTED],
    };
  }
  // The URL policy refuses the URL itself: no attempt can succeed until an operator changes the policy or the URL.
  // Parked as `endpoint_disabled`, so that re-enabling the endpoint sends it again (the log line keeps `url_refused`).
  if (kind === "url_refused") {
    return {
      state: attempted("exhausted", attempts, now, result, null, PARKED_ERROR_KIND),
      effects: [DISABLE_URL_REFUSED, NOTIFY_EXHAUSTED],
    };
  }
  // A custom policy's answer that is no number of ms (NaN, ±Infinity) ends the schedule as `undefined` does, and the
  // delivery stays for a manual retry; the delay, stretched by a Retry-After, is cut to maxRetryDelayMs again, so the
  // due time is one both queues can store (never "timestamp out of range", re-sent forever).
  const scheduled = config.retryable(result) ? policyDelay(config.retry(attempts, config.random)) : undefined;
  if (scheduled === undefined) {
    return { state: attempted("exhausted", attempts, now, result, null, kind), effects: [NOTIFY_EXHAUSTED] };
  }
  const at = now + Math.min(retryDelay(result, scheduled, config), DELIVERY_DEFAULTS.maxRetryDelayMs);
  return {
    state: attempted("failed", attempts, now, result, at, kind),
    effects: [{ type: "schedule", at }, NOTIFY_FAILED],
  };
}

/**
 * The delivery state machine: a pure function of the state, one event and the time (epoch ms).
 * A delivered delivery never changes again; every other state accepts each event (see the table in
 * docs/webhooks-providers.md).
 * @example transition(initialDeliveryState(now), { type: "attempt", result: { kind: "response", status: 200, durationMs: 5 } }, now)
 */

export function transition(
  state: DeliveryState,
  event: DeliveryEvent,
  now: number,
  config: DeliveryConfig = defaultDeliveryConfig,
): Transition {
  if (state.status === "delivered") return { state, effects: [] };
  switch (event.type) {
    case "attempt":
      if (state.status === "exhausted") return { state, effects: [] };
      return afterAttempt(state, event.result, now, config);
    case "defer":
      if (state.status === "exhausted") return { state, effects: [] };
      return { state: { ...state, nextAttemptAt: event.until }, effects: [{ type: "schedule", at: event.until }] };
    case "endpoint_disabled":
      if (state.status === "exhausted") return { state, effects: [] };
      return {
        state: { ...state, status: "exhausted", nextAttemptAt: null, lastErrorKind: PARKED_ERROR_KIND },
        effects: [{ type: "notify", event: "delivery.exhausted" }],
      };
    case "manual_retry":
      return {
        state: { ...state, status: "pending", attempts: 0, nextAttemptAt: now },
        effects: [{ type: "schedule", at: now }],
      };
  }
}
