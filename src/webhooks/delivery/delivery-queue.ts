import type { RateLimitStore } from "../../ratelimit/store";
import type { AttemptInput, AttemptRecord, DeliveryErrorKind } from "./attempt";
import type { CircuitBoard } from "./circuit-board";
import type { WebhookEvent } from "./event";
import type { DeliveryState, DeliveryStatus } from "./state-machine";

/** A delivery: one event to one endpoint, with its state. */
export interface DeliveryRecord {
  readonly id: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly endpointId: string;
  /**
   * The tenant the event was published for ({@link PublishOptions.tenant}), which its id is unique within; none for
   * the operator's events (and, on PostgreSQL, for deliveries stored before migration `delivery@14`). Tells apart the
   * tenants' events of one id that an operator's endpoint with `allTenants` receives. A claim tells the operator's
   * events from those older rows: {@link ClaimedDelivery.operatorEvent}.
   */
  readonly tenant?: string | undefined;
  /** The JSON body sent on every attempt (the serialised event). */
  readonly payload: string;
  /** Epoch ms. */
  readonly createdAt: number;
  readonly state: DeliveryState;
  /** The W3C `traceparent` of the publishing span, when {@link PublishOptions.traceparent} was given. */
  readonly traceparent?: string | undefined;
  /**
   * The W3C `tracestate` published beside {@link traceparent}, when {@link PublishOptions.tracestate} was given (its
   * members joined by ",", without white space).
   */
  readonly tracestate?: string | undefined;
}

/** A delivery claimed by one worker until `leaseUntil` (or until it completes). */
export interface ClaimedDelivery extends DeliveryRecord {
  readonly leaseToken: string;
  readonly leaseUntil: number;
  /**
   * `true` when the event was published without a tenant (the operator's own, `tenant` undefined): the worker then
   * sends it only to an endpoint that receives the operator's events, one without a tenant, as publish fans it out.
   * Unset when `tenant` names one (the tenant's event, checked by its tenant; a `tenant` wins over this) and when the
   * queue cannot tell: a PostgreSQL row stored before migration `delivery@14` (its tenant NULL, unrecorded then), or
   * a queue of your own that does not set it. Such a delivery's tenant is unknown, and it is sent unchecked rather
   * than stranded. Both built-in queues set it on every claim of an operator's event; `get` and `list` leave it out.
   */
  readonly operatorEvent?: boolean | undefined;
}

/** Options of {@link DeliveryQueue.publish}. */
export interface PublishOptions {
  /** Epoch ms. @default Date.now() */
  now?: number | undefined;
  /** Delay of the first attempt, in ms. @default 0 */
  delayMs?: number | undefined;
  /**
   * The W3C Trace Context `traceparent` of the publishing span (https://www.w3.org/TR/trace-context/ §3.2), stored
   * with every delivery so each attempt can link to it; a malformed value is a TypeError.
   * `tracedPublish` in `rest-webhooks/otel` passes the active span's.
   */
  traceparent?: string | undefined;
  /**
   * The W3C Trace Context `tracestate` of the publishing span (https://www.w3.org/TR/trace-context/ §3.3), vendor
   * entries that travel beside `traceparent`: stored with every delivery and sent with `traceparent`. Only with a
   * `traceparent`; at most 32 `key=value` members, each key once, 512 characters once white space is taken out
   * (§3.3.1.5), else a TypeError. An empty list is stored as none. `tracedPublish` passes the active span's.
   */
  tracestate?: string | undefined;
  /**
   * The tenant the event belongs to: it reaches only that tenant's subscribed endpoints, and the operator's created
   * with `allTenants`. Without it, the event reaches only endpoints without a tenant (the operator's own), never a
   * tenant's. 1 to 255 printable ASCII characters, else
   * a TypeError.
   */
  tenant?: string | undefined;
  /**
   * Only this endpoint (its id): the event goes to it alone, whatever its `enabledEvents`, if it is enabled and
   * receives the events of `tenant` (its own, or the operator's, with `allTenants` for a tenant's). For events its
   * owner asked for, such as a test event (`EndpointAdmin.sendTest`). Anything but 1 to 255 printable ASCII
   * characters is a TypeError.
   */
  endpointId?: string | undefined;
}

/** The outcome of publishing: the deliveries created (none when no endpoint subscribes, or already published). */
export interface PublishResult {
  deliveryIds: string[];
}

/** Filters of {@link DeliveryQueue.list}. */
export interface DeliveryListOptions {
  status?: readonly DeliveryStatus[] | undefined;
  /** Only deliveries created at or after this epoch ms. */
  since?: number | undefined;
  /**
   * Only the delivery of this event: "did this event reach them?". An endpoint has at most one per event id and
   * tenant, so a tenant's endpoint at most one; the operator's with `allTenants` one per tenant that published the id.
   */
  eventId?: string | undefined;
  /**
   * Only the deliveries whose last attempt (or parking) ended with this error kind (`DeliveryState.lastErrorKind`).
   * With `status: ["exhausted"]` and `endpoint_disabled`, the deliveries parked while their endpoint was disabled,
   * which both queues read from an index of their own: a page costs the same behind any number of other exhausted
   * deliveries. For other kinds the queues pass over the deliveries of the statuses asked that do not match. An
   * unknown kind is a TypeError. A queue written before this option ignores it: `EndpointAdmin` checks what it gets.
   */
  lastErrorKind?: DeliveryErrorKind | undefined;
  /** @default 100 */
  limit?: number | undefined;
  /**
   * Only the deliveries after this one in the list's order (older ones): pass the last id of the previous page to
   * read on. A delivery that is not one of the endpoint's gives an empty page.
   */
  startingAfter?: string | undefined;
}

/** What {@link DeliveryQueue.attempts} reads: an endpoint's log lines, or one delivery's. */
export interface AttemptsQuery {
  endpointId: string;
  /** Only this delivery's lines. */
  deliveryId?: string | undefined;
  /** @default 100 */
  limit?: number | undefined;
  /**
   * Only the lines older than this one (the lines after it, newest first): pass the last id of the previous page to
   * read on. The queue compares ids, so this works after that line itself was trimmed or purged. An id this queue
   * could not have given (malformed) is an `AttemptCursorError` (a `TypeError`, code `invalid_cursor`), which the
   * endpoint API answers with `400 invalid_cursor`; a queue of your own throws it for such an id, and only for it.
   */
  startingAfter?: string | undefined;
}

/** Options of {@link DeliveryQueue.claim}. */
export interface ClaimOptions {
  limit: number;
  now: number;
  /** How long the claim holds, ms: at least 1 (a shorter lease would end as it starts; a `TypeError`). */
  leaseMs: number;
  /** At most this many deliveries of any one endpoint in this claim. @default limit */
  perEndpoint?: number | undefined;
  /** Caps for some endpoints in place of `perEndpoint` (the room a worker has for them); 0 claims none of theirs. */
  endpointLimits?: ReadonlyMap<string, number> | undefined;
}

/**
 * The delivery queue. Deliveries due at or before `now` are claimed with a lease; completing writes the new state and
 * the attempt log line. A claim whose lease ran out is due again, so a crashed worker loses nothing.
 * Implementations: `createMemoryDeliveryQueue` (`rest-webhooks/webhooks/delivery/memory`) and
 * `createPostgresDeliveryQueue` (`rest-webhooks/webhooks/delivery/postgres`, whose `withClient(tx)` publishes inside
 * your transaction: the transactional outbox); one shared contract suite.
 */
export interface DeliveryQueue {
  /**
   * Fans the event out to every enabled endpoint of its tenant (`options.tenant`; none: the endpoints without one)
   * subscribed to its type, and to the operator's with `allTenants` (with `options.endpointId`, to that endpoint
   * alone). An event id is unique within its tenant: publishing the same id for the same tenant again is a no-op
   * while any of its deliveries is kept, but the same id for another tenant is another event (the events published
   * without a tenant are a scope of their own), so each tenant's events may be numbered apart. An id no delivery can
   * carry (no header value, or with a ".", which the signed content `<id>.<timestamp>.<body>` cannot hold) is refused
   * with `invalid_event`.
   */
  publish(event: WebhookEvent, options?: PublishOptions): Promise<PublishResult>;
  /**
   * Claims up to `limit` due deliveries, fairly between endpoints: endpoints with due work take turns, each giving at
   * most `perEndpoint` (or its `endpointLimits` entry), oldest due first within an endpoint. So one endpoint's backlog
   * never delays another endpoint's due delivery by more than one claim. A delivery whose lease ran out ranks by its
   * lease end in the memory queue, by the due time it had when claimed in the PostgreSQL queue; which endpoints a
   * claim cut short by `limit` serves, and the order among deliveries due together, are the queue's choice.
   */
  claim(options: ClaimOptions): Promise<ClaimedDelivery[]>;
  /**
   * Extends the leases of deliveries still being worked on (the worker's heartbeat), so a slow attempt is never
   * claimed again by another worker; returns the ids whose lease was still held and is now renewed until `now + leaseMs`.
   * A lease is held until another claim takes the delivery over or a `complete` or `update` ends it, even once it ran
   * out: a claim no other has taken since is renewed (and can complete); one taken over is not.
   */
  renew(claims: readonly ClaimedDelivery[], now: number, leaseMs: number): Promise<string[]>;
  /**
   * Stores the state after an attempt (and its log line) if the lease is still held; `false` when it was lost
   * (the log line is kept either way, a U+0000 of its `response` as U+FFFD). The queue gives the line its id,
   * greater than every id it gave before. A state or log line no queue can store (a time outside the years 1 to
   * 275760, a scheduled delivery without a due time, a count, status or duration that is not a finite number within
   * PostgreSQL's `integer`, an unknown error kind) is a TypeError, and nothing is stored; a duration is kept in whole ms.
   */
  complete(claim: ClaimedDelivery, state: DeliveryState, attempt?: AttemptInput): Promise<boolean>;
  /**
   * Replaces the state if the delivery is still in one of `from` and not leased at `now` (manual actions); `now`
   * defaults to the queue's clock (its `now` option), on which the leases were taken.
   */
  update(id: string, from: readonly DeliveryStatus[], state: DeliveryState, now?: number): Promise<boolean>;
  /** Epoch ms of the earliest scheduled delivery (leased ones included at their lease end), if any. */
  nextDueAt(): Promise<number | undefined>;
  get(id: string): Promise<DeliveryRecord | undefined>;
  /**
   * An endpoint's deliveries, newest first by creation time, page by page (`startingAfter`); deliveries created in
   * the same millisecond come in no particular order (the PostgreSQL queue: by id).
   */
  list(endpointId: string, options?: DeliveryListOptions): Promise<DeliveryRecord[]>;
  /** The delivery log: attempts of an endpoint (or of one delivery), newest first, page by page (`startingAfter`). */
  attempts(query: AttemptsQuery): Promise<AttemptRecord[]>;
  /**
   * Where every worker on this queue keeps the per-endpoint rate limits, when the queue has a shared place for them
   * (the PostgreSQL queue: its own database; the memory queue: its process), so N workers together send at most an
   * endpoint's rate. The worker uses it unless given a `rateLimiter`.
   */
  sharedRateLimits?(): RateLimitStore;
  /**
   * Where every worker on this queue shares the circuit breaker's transitions (an endpoint's circuit open, its one
   * probe): the PostgreSQL queue's database, the memory queue's process. The worker uses it unless `circuit: false`.
   */
  sharedCircuits?(): CircuitBoard;
  /**
   * Calls `listener` whenever a delivery may have become due earlier than announced: a publish, a manual retry
   * (`update`), a delivery handed back due at once (`complete` without an attempt). The memory queue tells its own
   * process's subscribers; the PostgreSQL queue, every process's (`listen`, `notify`). Returns what unsubscribes.
   */
  subscribe?(listener: () => void): () => void;
}
