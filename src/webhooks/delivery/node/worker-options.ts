import { isFieldContent } from "../../../http/field-value";
import { isThenable } from "../../../http/thenable";
import { optionalFunction } from "../../../options/function-option";
import { nonNegativeNumber, positiveInteger, positiveNumber } from "../../../options/number-option";
import { createEndpointRateLimiter, type EndpointRateLimiter } from "../../../ratelimit/endpoint-limiter";
import type { RetryPolicy } from "../../retry/backoff";
import type { AttemptInput } from "../attempt";
import type { CircuitBoard } from "../circuit-board";
import { type CircuitConfig, defaultCircuitConfig } from "../circuit-breaker";
import { DELIVERY_DEFAULTS } from "../defaults";
import type { DeliveryQueue, DeliveryRecord } from "../delivery-queue";
import type { RequestTarget } from "../delivery-request";
import type { DisabledReason } from "../endpoint";
import type { EndpointStore } from "../endpoint-store";
import { type DeliveryConfig, defaultDeliveryConfig } from "../state-machine";
import { createDispatcher, type Dispatcher, type DispatcherOptions } from "./dispatcher";

/** What the worker reports: delivery outcomes, every attempt, circuit changes, endpoints it disabled, and unexpected errors. */
export type DeliveryWorkerEvent =
  | {
      type: "delivery.delivered" | "delivery.failed" | "delivery.exhausted";
      delivery: DeliveryRecord;
      attempt?: AttemptInput | undefined;
    }
  | { type: "endpoint.disabled"; endpointId: string; reason: DisabledReason }
  /**
   * Every stored attempt (its log line, less the id the queue gave it), whatever the outcome: for tracing, metrics.
   * `target` is where it was sent (scheme, host, port; never the path, which may hold a secret), absent when the
   * endpoint's URL does not parse.
   */
  | { type: "attempt"; delivery: DeliveryRecord; attempt: AttemptInput; target?: Readonly<RequestTarget> | undefined }
  /** An endpoint's circuit changed status after an attempt's outcome. */
  | { type: "circuit"; endpointId: string; status: "open" | "half_open" | "closed" }
  | { type: "error"; error: unknown };

/** Options of {@link createDeliveryWorker}. */
export interface DeliveryWorkerOptions {
  queue: DeliveryQueue;
  endpoints: EndpointStore;
  /** A dispatcher, or options for the default one. @default createDispatcher() */
  dispatcher?: Dispatcher | DispatcherOptions;
  /** Deliveries in flight at once. @default 64 */
  concurrency?: number;
  /**
   * Deliveries in flight at once to one endpoint, at most. Each endpoint starts at 1 and gains 1 per success up to
   * this; a failed attempt halves its share and an unanswered one (time-out, refused connection) cuts it to 1, so an
   * endpoint that stopped answering holds one slot, not this many. @default 16
   */
  endpointConcurrency?: number;
  /**
   * How long a claim is held before another worker may take the delivery over; renewed every third of it while the
   * delivery is held, so a slow attempt is never sent twice. At least 1_000. @default 60_000
   */
  leaseMs?: number;
  /**
   * On `stop()`, how long attempts in flight may still finish; then they are aborted and their deliveries go back to
   * the queue as they were (no attempt counted). At most the dispatcher's time-out. @default 5_000 (or the time-out)
   */
  stopGraceMs?: number;
  /** Longest sleep between queue checks (other processes may publish). @default 1_000 */
  pollIntervalMs?: number;
  /** @default the Standard Webhooks schedule with ±20 % jitter */
  retry?: RetryPolicy;
  /** Decides which failures are retried. @default every failure but 410 */
  retryable?: DeliveryConfig["retryable"];
  /** A `Retry-After` (429, 503) may stretch the scheduled delay up to this factor. @default 2 */
  retryAfterFactor?: number;
  /** …or up to this many ms when that is more (a scheduled delay of 0 still honours a short Retry-After). @default 60_000 */
  retryAfterFloorMs?: number;
  /**
   * Per-endpoint circuit breaker settings, or `false` for none. Each worker judges outcomes with its own window; the
   * transitions (open, the one probe, closed) are shared through the queue's `sharedCircuits()` when it has one.
   * `window` is an integer from 1 to 32, `minimumAttempts` one from 1 to `window`, `failureRatio` above 0 and at most
   * 1, `coolDownMs` 0 or more; else a TypeError naming the setting.
   */
  circuit?: Partial<CircuitConfig> | false;
  /** An endpoint failing this long without a success is disabled, in ms; `Infinity` for never. @default 432_000_000 (5 days) */
  disableAfterMs?: number;
  /**
   * Paces endpoints that set a rate limit. @default the queue's shared store when it has one (the PostgreSQL queue:
   * every worker process on it shares each endpoint's rate), else an in-memory limiter (per process)
   */
  rateLimiter?: EndpointRateLimiter;
  /** How long an endpoint read from the store is reused, in ms. @default 1_000 */
  endpointCacheMs?: number;
  /** @default Date.now */
  now?: () => number;
  /** @default Math.random */
  random?: () => number;
  /**
   * Told about outcomes (e.g. to notify an endpoint's owner that it was disabled). Not awaited; a throw, or an async
   * listener's rejection, is ignored and deliveries go on.
   */
  onEvent?: (event: DeliveryWorkerEvent) => void;
  /** The `User-Agent` of every attempt: a header field value (RFC 9110 §5.5), else a TypeError. @default "rest-webhooks" */
  userAgent?: string;
  /**
   * Send the publisher's W3C `traceparent` (stored with the event at publish) with each attempt, and its `tracestate`
   * beside it when one was stored, so a consumer can continue the trace. Off by default: it tells the receiver about
   * your tracing. @default false
   */
  propagateTraceContext?: boolean;
}

/** A running delivery loop. */
export interface DeliveryWorker {
  /** Starts claiming and sending; idempotent. */
  start(): void;
  /**
   * Stops: no new attempt starts; attempts in flight get `stopGraceMs`, then are aborted; every delivery not finished
   * goes back to the queue, due at once, for another worker. Resolves when all of that is stored.
   */
  stop(): Promise<void>;
  /** Checks the queue now (e.g. after publishing from this process). */
  wake(): void;
  /** Resolves once nothing is in flight and nothing is scheduled (tests, benchmarks). */
  drained(): Promise<void>;
  /** Deliveries claimed and not yet completed. */
  readonly inFlight: number;
}

/** The worker's options with every default applied (internal). */
export interface WorkerSettings {
  readonly queue: DeliveryQueue;
  readonly endpoints: EndpointStore;
  readonly dispatcher: Dispatcher;
  /** Whether the worker created the dispatcher, and so closes it on stop (and makes another on a restart). */
  readonly ownDispatcher: boolean;
  /** A dispatcher like the first, for a restart after `stop()` closed the worker's own (the one passed in, else). */
  newDispatcher(): Dispatcher;
  readonly concurrency: number;
  readonly endpointConcurrency: number;
  /** Deliveries kept claimed and signed ahead, waiting for a free slot (pipelining). */
  readonly lookahead: number;
  /** Claims taken in one go once work is in flight. */
  readonly batch: number;
  readonly leaseMs: number;
  readonly stopGraceMs: number;
  readonly pollMs: number;
  readonly cacheMs: number;
  readonly disableAfterMs: number;
  /** `undefined` when the circuit breaker is off. */
  readonly circuit: CircuitConfig | undefined;
  /** The circuit breaker's transitions shared with every worker on the queue, when the queue offers it. */
  readonly board: CircuitBoard | undefined;
  /** How long a probe won on the board stays this worker's before another may take it. */
  readonly probeHoldMs: number;
  readonly config: DeliveryConfig;
  readonly now: () => number;
  readonly random: () => number;
  readonly userAgent: string | undefined;
  readonly propagateTraceContext: boolean;
  /** The listener, if any: events are only built when someone listens. */
  readonly listener: ((event: DeliveryWorkerEvent) => void) | undefined;
  /** The rate limiter, created on first use. */
  rateLimiter(): EndpointRateLimiter;
}

const OWNER = "createDeliveryWorker";

// The dispatcher's time-out when the worker creates it; `undefined` for a dispatcher passed in (its own business).
function timeoutOf(options: DeliveryWorkerOptions): number | undefined {
  const dispatcher = options.dispatcher;
  if (dispatcher !== undefined && "dispatch" in dispatcher) return undefined;
  return (dispatcher as DispatcherOptions | undefined)?.timeoutMs ?? DELIVERY_DEFAULTS.timeoutMs;
}

/** Options that cannot work, refused at construction with the option's name. */
function checkOptions(options: DeliveryWorkerOptions): void {
  if (typeof options !== "object" || options === null) throw new TypeError("createDeliveryWorker: options required");
  for (const name of ["queue", "endpoints"] as const) {
    if (typeof options[name] !== "object" || options[name] === null) {
      throw new TypeError(`createDeliveryWorker: options.${name} is required`);
    }
  }
  // Called on every claim or attempt: anything but a function failed each one (an injected clock for one), or, for
  // onEvent, silently told nobody.
  for (const name of ["now", "random", "onEvent", "retryable"] as const) {
    optionalFunction(OWNER, name, options[name]);
  }
  if (options.concurrency !== undefined) positiveInteger(OWNER, "concurrency", options.concurrency);
  if (options.endpointConcurrency !== undefined) {
    positiveInteger(OWNER, "endpointConcurrency", options.endpointConcurrency);
  }
  if (options.leaseMs !== undefined) positiveNumber(OWNER, "leaseMs", options.leaseMs, "milliseconds");
  if (options.pollIntervalMs !== undefined) {
    positiveNumber(OWNER, "pollIntervalMs", options.pollIntervalMs, "milliseconds");
  }
  // Infinity: never disabled. NaN would mean the same, silently, so it is refused.
  const disableAfterMs = options.disableAfterMs;
  if (disableAfterMs !== undefined && disableAfterMs !== Number.POSITIVE_INFINITY) {
    positiveNumber(OWNER, "disableAfterMs", disableAfterMs, "milliseconds");
  }
  // A NaN factor or floor would schedule the attempt after a 429 or 503 with Retry-After at the time NaN.
  if (options.retryAfterFactor !== undefined) {
    nonNegativeNumber(OWNER, "retryAfterFactor", options.retryAfterFactor);
  }
  if (options.retryAfterFloorMs !== undefined) {
    nonNegativeNumber(OWNER, "retryAfterFloorMs", options.retryAfterFloorMs, "milliseconds");
  }
  // 0 is meaningful here: read the endpoint from the store for every delivery.
  if (options.endpointCacheMs !== undefined && !(options.endpointCacheMs >= 0)) {
    throw new TypeError(
      `createDeliveryWorker: endpointCacheMs must be 0 or more, got ${String(options.endpointCacheMs)}`,
    );
  }
  // RFC 9110 §5.5: a field value is visible characters (and obs-text) with spaces or tabs between them; undici refuses
  // anything else on every attempt, which then loops for ever without counting one. Not empty: RFC 9110 §10.1.5.
  if (
    options.userAgent !== undefined &&
    (typeof options.userAgent !== "string" || !isFieldContent(options.userAgent))
  ) {
    throw new TypeError(
      `createDeliveryWorker: userAgent must be a header field value (visible characters, with spaces or tabs between them; RFC 9110 §5.5), got ${JSON.stringify(options.userAgent)}.`,
    );
  }
  const dispatcher = options.dispatcher;
  if (dispatcher !== undefined && !("dispatch" in dispatcher)) {
    const timeoutMs = (dispatcher as DispatcherOptions).timeoutMs;
    if (timeoutMs !== undefined) positiveNumber(OWNER, "dispatcher.timeoutMs", timeoutMs, "milliseconds");
  }
  // Renewed every third of the lease: shorter than a second leaves no room for a renewal's round trip.
  if (options.leaseMs !== undefined && options.leaseMs < 1_000) {
    throw new TypeError(
      `createDeliveryWorker: leaseMs must be at least 1000 (it is renewed every third of it while an attempt runs), got ${options.leaseMs}`,
    );
  }
  const grace = options.stopGraceMs;
  if (grace !== undefined) {
    const timeoutMs = timeoutOf(options);
    if (typeof grace !== "number" || !(grace >= 0) || !Number.isFinite(grace)) {
      throw new TypeError(`createDeliveryWorker: stopGraceMs must be 0 or more, got ${String(grace)}`);
    }
    if (timeoutMs !== undefined && grace > timeoutMs) {
      throw new TypeError(
        `createDeliveryWorker: stopGraceMs (${grace}) must not be longer than dispatcher.timeoutMs (${timeoutMs}): an attempt is over by then anyway`,
      );
    }
  }
}

/**
 * The circuit breaker's settings, defaults for those not given (nor given as `undefined`), refused when the breaker
 * could not work with them: a window past 32 outcomes (the bit mask's width) or below `minimumAttempts` never opened,
 * and a cool-down that is no number never let a probe through, holding the endpoint's deliveries for good.
 */
function circuitSettings(given: Partial<CircuitConfig> | undefined): CircuitConfig {
  const owner = "createDeliveryWorker";
  const pick = <K extends keyof CircuitConfig>(name: K) => given?.[name] ?? defaultCircuitConfig[name];
  const window = positiveInteger(owner, "circuit.window", pick("window"));
  if (window > 32) throw new TypeError(`${owner}: circuit.window must be at most 32, got ${window}`);
  const minimumAttempts = positiveInteger(owner, "circuit.minimumAttempts", pick("minimumAttempts"));
  if (minimumAttempts > window) {
    throw new TypeError(
      `${owner}: circuit.minimumAttempts (${minimumAttempts}) must not be more than circuit.window (${window}): ` +
        "the circuit would never open",
    );
  }
  const failureRatio = pick("failureRatio");
  if (typeof failureRatio !== "number" || !(failureRatio > 0 && failureRatio <= 1)) {
    throw new TypeError(`${owner}: circuit.failureRatio must be above 0 and at most 1, got ${String(failureRatio)}`);
  }
  const coolDownMs = nonNegativeNumber(owner, "circuit.coolDownMs", pick("coolDownMs"), "milliseconds");
  return { window, minimumAttempts, failureRatio, coolDownMs };
}

/** Applies the defaults (DELIVERY_DEFAULTS) to the worker's options. */
export function workerSettings(options: DeliveryWorkerOptions): WorkerSettings {
  checkOptions(options);
  const circuit = options.circuit === false ? undefined : circuitSettings(options.circuit);
  const random = options.random ?? Math.random;
  const concurrency = options.concurrency ?? DELIVERY_DEFAULTS.concurrency;
  const now = options.now ?? Date.now;
  const ownDispatcher = options.dispatcher === undefined || !("dispatch" in options.dispatcher);
  // The dispatcher the worker creates reads Retry-After dates on the worker's clock.
  const newDispatcher = ownDispatcher
    ? () => createDispatcher({ now, ...(options.dispatcher as DispatcherOptions | undefined) })
    : () => options.dispatcher as Dispatcher;
  const dispatcher = newDispatcher();
  let limiter = options.rateLimiter;
  return {
    queue: options.queue,
    endpoints: options.endpoints,
    dispatcher,
    ownDispatcher,
    newDispatcher,
    concurrency,
    endpointConcurrency: options.endpointConcurrency ?? DELIVERY_DEFAULTS.endpointConcurrency,
    // Claiming and signing a few at a time keeps that code warm in the CPU caches, which at low concurrency (one
    // request at a time, the machine doing other things in between) costs several times less than one at a time.
    lookahead: Math.max(8, Math.ceil(concurrency / 4)),
    batch: Math.max(4, Math.ceil(concurrency / 4)),
    leaseMs: options.leaseMs ?? DELIVERY_DEFAULTS.leaseMs,
    stopGraceMs:
      options.stopGraceMs ?? Math.min(DELIVERY_DEFAULTS.stopGraceMs, timeoutOf(options) ?? Number.POSITIVE_INFINITY),
    pollMs: options.pollIntervalMs ?? DELIVERY_DEFAULTS.pollIntervalMs,
    cacheMs: options.endpointCacheMs ?? DELIVERY_DEFAULTS.endpointCacheMs,
    disableAfterMs: options.disableAfterMs ?? DELIVERY_DEFAULTS.disableAfterMs,
    circuit,
    board: circuit === undefined ? undefined : options.queue.sharedCircuits?.(),
    probeHoldMs: Math.max(timeoutOf(options) ?? 0, options.leaseMs ?? DELIVERY_DEFAULTS.leaseMs),
    config: {
      retry: options.retry ?? defaultDeliveryConfig.retry,
      random,
      retryAfterFactor: options.retryAfterFactor ?? defaultDeliveryConfig.retryAfterFactor,
      retryAfterFloorMs: options.retryAfterFloorMs ?? DELIVERY_DEFAULTS.retryAfterFloorMs,
      retryable: options.retryable ?? defaultDeliveryConfig.retryable,
    },
    now,
    random,
    userAgent: options.userAgent,
    propagateTraceContext: options.propagateTraceContext === true,
    listener: options.onEvent,
    rateLimiter() {
      // The queue's shared store when it has one (PostgreSQL): every worker process then shares each endpoint's rate.
      limiter ??= createEndpointRateLimiter({ store: options.queue.sharedRateLimits?.() });
      return limiter;
    },
  };
}

const ignore = () => {};

/** Tells the listener, if any; a listener's failure must not stop deliveries. */
export function emit(settings: WorkerSettings, event: DeliveryWorkerEvent): void {
  try {
    const returned: unknown = settings.listener?.(event);
    // An async listener fails by rejecting: left unhandled, that ended the process (Node's default).
    if (isThenable(returned)) Promise.resolve(returned).catch(ignore);
  } catch {
    // Ignored on purpose: see above.
  }
}
