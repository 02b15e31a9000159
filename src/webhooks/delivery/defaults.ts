import { STANDARD_WEBHOOKS_SCHEDULE } from "../retry/backoff";
import { MAX_RETRY_DELAY_MS } from "../retry/policy-delay";

/**
 * Every default of the delivery engine in one table, so a reader sees the whole policy at once.
 * @see https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
 */
export const DELIVERY_DEFAULTS = {
  /**
   * Delay before each attempt, in ms: immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h — the schedule
   * Standard Webhooks recommends and Svix uses (8 attempts over about 27.6 h).
   */
  schedule: STANDARD_WEBHOOKS_SCHEDULE,
  /** Each scheduled delay is spread uniformly over ±20 %. */
  jitter: 0.2,
  /**
   * A `Retry-After` may stretch the scheduled delay up to this factor, or up to `retryAfterFloorMs` when that is
   * more, never beyond the schedule's largest delay.
   */
  retryAfterFactor: 2,
  /** The least a `Retry-After` may always ask for, even when the scheduled delay is 0 (full jitter, a 0 in a schedule). */
  retryAfterFloorMs: 60_000,
  /**
   * The longest a retry waits (365 days), whatever the retry policy answers: a longer delay is cut to this. Not an
   * option but a bound: far beyond any schedule in use (Standard Webhooks waits 10 h at most), and a due time both
   * queues can store (PostgreSQL refuses a timestamp past the year 294276, a JavaScript Date past 275760).
   */
  maxRetryDelayMs: MAX_RETRY_DELAY_MS,
  /**
   * Queues: the largest event `publish` takes, in bytes of its JSON (1 MiB). A consumer on this library's defaults
   * refuses a larger body (413, the adapters' `bodyLimit`), so every delivery of it would fail for days; and each
   * delivery keeps its own copy.
   */
  maxPayloadBytes: 1_048_576,
  /** Per-attempt time-out covering connect, request and response. */
  timeoutMs: 15_000,
  /** The dispatcher reads at most this many bytes of a response. */
  maxResponseBytes: 65_536,
  /** Bytes of the response kept in the attempt log. */
  logResponseBytes: 1_024,
  /** After a rotation the previous secret keeps signing this long. */
  secretGraceMs: 86_400_000,
  /** An endpoint failing this long without a single success is disabled (Svix: 5 days). */
  disableAfterMs: 432_000_000,
  /** Circuit breaker: outcomes remembered per endpoint (at most 32). */
  circuitWindow: 20,
  /** Circuit breaker: outcomes needed before the circuit may open. */
  circuitMinimumAttempts: 10,
  /** Circuit breaker: the share of failures in the window that opens the circuit. */
  circuitFailureRatio: 0.8,
  /** Circuit breaker: how long an open circuit waits before one probe. */
  circuitCoolDownMs: 30_000,
  /** Worker: deliveries in flight at once. */
  concurrency: 64,
  /** Worker: deliveries in flight at once to a single endpoint, at most (each starts at 1: AIMD). */
  endpointConcurrency: 16,
  /** Worker: on stop, how long attempts in flight may finish before they are aborted (never beyond the time-out). */
  stopGraceMs: 5_000,
  /** Worker: how long a claim is held before another worker may take the delivery over. */
  leaseMs: 60_000,
  /** Worker: the longest it sleeps before asking the queue again (other processes may publish). */
  pollIntervalMs: 1_000,
  /** Worker: how long an endpoint read from the store is reused. */
  endpointCacheMs: 1_000,
  /** In-memory queue: terminal (delivered or exhausted) deliveries kept at most. */
  retainTerminal: 100_000,
  /**
   * Both queues (memory, PostgreSQL): how long a terminal delivery is kept after it ended (7 days: longer than
   * `disableAfterMs`, so the deliveries a disabled endpoint parked are still there for a while when its owner
   * re-enables it).
   */
  retainTerminalMs: 604_800_000,
} as const;
