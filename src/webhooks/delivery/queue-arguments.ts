import { Buffer } from "node:buffer";
import {
  finiteNumber,
  nonNegativeInteger,
  nonNegativeNumber,
  positiveInteger,
  positiveNumber,
} from "../../options/number-option";
import { isWebhookId } from "../signing/webhook-id";
import { type AttemptInput, DELIVERY_ERROR_KINDS, type DeliveryErrorKind } from "./attempt";
import { DELIVERY_DEFAULTS } from "./defaults";
import type { ClaimOptions, DeliveryListOptions, PublishOptions } from "./delivery-queue";
import { WebhookDeliveryError } from "./errors";
import type { WebhookEvent } from "./event";
import { isEventType } from "./event-type";
import { isPrintableId } from "./printable-id";
import { DELIVERY_STATUSES, type DeliveryState } from "./state-machine";
import { checkTenant } from "./tenant";
import { checkTraceparent, checkTracestate, tracestateOf } from "./trace-context";

/*
 * The checks every DeliveryQueue makes of its arguments before it reads or writes, so that the memory and PostgreSQL
 * queues refuse the same values with the same TypeError. NaN compares false with everything: a NaN due time or lease
 * end would sit in the memory queue's heap where no claim ever finds it (a delivery lost), where PostgreSQL refuses it
 * with an error of its own.
 */

// The instants a delivery's times may take: from 0001-01-01 to +275760-09-13, the last a JavaScript Date holds.
// PostgreSQL's timestamptz holds all of them; past them it fails with "timestamp out of range", while the memory
// queue would keep the value (and a worker re-send the delivery for ever).
const EARLIEST_MS = -62_135_596_800_000;
const LATEST_MS = 8.64e15;

function refuseInstant(owner: string, name: string, value: unknown): never {
  throw new TypeError(
    `${owner}: ${name} must be an instant between the years 1 and 275760, in epoch milliseconds, got ${String(value)}.`,
  );
}

/** `value` when it is an instant both queues can store (see EARLIEST_MS, LATEST_MS). */
function instant(owner: string, name: string, value: unknown): number {
  if (typeof value !== "number" || !(value >= EARLIEST_MS && value <= LATEST_MS)) refuseInstant(owner, name, value);
  return value;
}

/**
 * `DeliveryQueue.publish`'s options: an instant, a delay of 0 or more, a W3C traceparent and tracestate (this one only
 * beside a traceparent), a tenant, an endpoint id.
 */
export function checkPublishOptions(options: PublishOptions): void {
  if (options.now !== undefined) finiteNumber("DeliveryQueue.publish", "now", options.now, "epoch milliseconds");
  if (options.delayMs !== undefined) {
    nonNegativeNumber("DeliveryQueue.publish", "delayMs", options.delayMs, "milliseconds");
  }
  checkTraceparent(options.traceparent, "publish");
  checkTracestate(options.tracestate, options.traceparent, "publish");
  checkTenant("DeliveryQueue.publish", options.tenant);
  if (options.endpointId !== undefined && !isPrintableId(options.endpointId)) {
    throw new TypeError(
      "DeliveryQueue.publish: endpointId must be an endpoint id, 1 to 255 printable ASCII characters.",
    );
  }
}

/** The `tracestate` both queues store, once the options are checked: its members without white space, or none. */
export function publishTracestate(options: PublishOptions): string | undefined {
  return options.tracestate === undefined ? undefined : tracestateOf(options.tracestate) || undefined;
}

/** The first attempt's due time, `now + delayMs`, once the options are checked: an instant both queues can store. */
export function publishDueAt(options: PublishOptions, now: number): number {
  return instant("DeliveryQueue.publish", "now + delayMs", now + (options.delayMs ?? 0));
}

/** `DeliveryQueue.claim`'s options: counts are integers of 0 or more, the lease a duration above 0. */
export function checkClaimOptions(options: ClaimOptions): void {
  const owner = "DeliveryQueue.claim";
  nonNegativeInteger(owner, "limit", options.limit);
  checkLease(owner, options.now, options.leaseMs);
  if (options.perEndpoint !== undefined) nonNegativeInteger(owner, "perEndpoint", options.perEndpoint);
  // Every claim walks the map (one entry per endpoint the worker knows): the name is only spelled out for a refusal.
  for (const [endpointId, room] of options.endpointLimits ?? []) {
    if (!Number.isSafeInteger(room) || room < 0) nonNegativeInteger(owner, `endpointLimits of ${endpointId}`, room);
  }
}

/**
 * A lease length: at least a millisecond. A shorter lease ends before any worker could hold it (PostgreSQL keeps
 * microseconds, and `now + 1e-6 === now` in floating point), so the delivery would be due again within the same claim.
 */
export function checkLeaseMs(owner: string, leaseMs: number): void {
  positiveNumber(owner, "leaseMs", leaseMs, "milliseconds");
  if (leaseMs < 1) throw new TypeError(`${owner}: leaseMs must be at least 1 millisecond, got ${leaseMs}.`);
}

/** A claim's or a renewal's clock reading and lease length. */
export function checkLease(owner: string, now: number, leaseMs: number): void {
  finiteNumber(owner, "now", now, "epoch milliseconds");
  checkLeaseMs(owner, leaseMs);
  instant(owner, "now + leaseMs", now + leaseMs);
}

// The counts, statuses and durations both queues keep: PostgreSQL's `integer` (int4), which refuses anything past it
// ("out of range for type integer") or not whole, where the memory queue would keep it.
const INT4_MIN = -2_147_483_648;
const INT4_MAX = 2_147_483_647;

/** Throws a TypeError unless `value` is a whole number PostgreSQL's `integer` holds, at least `min`. */
function storedInteger(owner: string, name: string, value: unknown, min: number): void {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > INT4_MAX) {
    throw new TypeError(
      `${owner}: ${name} must be a whole number between ${min} and ${INT4_MAX}, got ${String(value)}.`,
    );
  }
}

const STATUSES: ReadonlySet<unknown> = new Set(DELIVERY_STATUSES);
const ERROR_KINDS: ReadonlySet<unknown> = new Set([null, ...DELIVERY_ERROR_KINDS]);

function nullableInstant(owner: string, name: string, value: unknown): void {
  if (value !== null) instant(owner, name, value);
}

/**
 * A state given to `complete` or `update`: a known status, a whole number of attempts, times both queues can store,
 * and a due time when scheduled. PostgreSQL refuses the rest with errors of its own (or, for a scheduled delivery
 * without a due time, never claims it), where the memory queue would keep it.
 */
export function checkState(owner: string, state: DeliveryState): void {
  if (typeof state !== "object" || state === null) throw new TypeError(`${owner}: state must be a DeliveryState.`);
  if (!STATUSES.has(state.status)) {
    throw new TypeError(
      `${owner}: status must be one of ${DELIVERY_STATUSES.join(", ")}, got ${String(state.status)}.`,
    );
  }
  storedInteger(owner, "attempts", state.attempts, 0);
  if (state.status === "pending" || state.status === "failed") instant(owner, "nextAttemptAt", state.nextAttemptAt);
  else nullableInstant(owner, "nextAttemptAt", state.nextAttemptAt);
  nullableInstant(owner, "lastAttemptAt", state.lastAttemptAt);
  nullableInstant(owner, "deliveredAt", state.deliveredAt);
  if (state.lastStatus !== null) storedInteger(owner, "lastStatus", state.lastStatus, 0);
  if (!ERROR_KINDS.has(state.lastErrorKind)) {
    throw new TypeError(
      `${owner}: lastErrorKind must be a DeliveryErrorKind or null, got ${String(state.lastErrorKind)}.`,
    );
  }
}

/**
 * An attempt's log line given to `complete`, when there is one: strings for the ids, a whole attempt number and
 * status (or null), a start both queues can store, a finite duration, a known error kind, a response text or null.
 * PostgreSQL refused the rest with errors of its own (the outcome unstored, the delivery sent again at every lease
 * end), or stored an error kind that made the endpoint's whole log unreadable, where the memory queue kept it.
 */
export function checkAttempt(owner: string, attempt: AttemptInput | undefined): void {
  if (attempt === undefined) return;
  if (typeof attempt !== "object" || attempt === null)
    throw new TypeError(`${owner}: attempt must be an AttemptInput.`);
  const { deliveryId, endpointId, eventId, durationMs, status, response } = attempt;
  if (typeof deliveryId !== "string" || typeof endpointId !== "string" || typeof eventId !== "string") {
    throw new TypeError(`${owner}: attempt.deliveryId, endpointId and eventId must be strings.`);
  }
  storedInteger(owner, "attempt.attempt", attempt.attempt, 0);
  instant(owner, "attempt.startedAt", attempt.startedAt);
  // Kept in whole milliseconds, as the dispatcher measures it: so a fraction is rounded, in every queue.
  const kept = typeof durationMs === "number" ? Math.round(durationMs) : Number.NaN;
  if (!(kept >= INT4_MIN && kept <= INT4_MAX)) {
    throw new TypeError(
      `${owner}: attempt.durationMs must be a finite number of milliseconds, got ${String(durationMs)}.`,
    );
  }
  if (status !== null) storedInteger(owner, "attempt.status", status, 0);
  if (!ERROR_KINDS.has(attempt.errorKind)) {
    throw new TypeError(
      `${owner}: attempt.errorKind must be a DeliveryErrorKind or null, got ${String(attempt.errorKind)}.`,
    );
  }
  if (response !== null && typeof response !== "string") {
    throw new TypeError(`${owner}: attempt.response must be a string or null.`);
  }
}

/** `DeliveryQueue.list`'s `since`, when given: an instant. */
export function listSince(options: DeliveryListOptions): number | undefined {
  return options.since === undefined
    ? undefined
    : finiteNumber("DeliveryQueue.list", "since", options.since, "epoch milliseconds");
}

/** `DeliveryQueue.list`'s `startingAfter`, when given: a delivery id. */
export function listStartingAfter(options: DeliveryListOptions): string | undefined {
  const after = options.startingAfter;
  if (after !== undefined && typeof after !== "string") {
    throw new TypeError(`DeliveryQueue.list: startingAfter must be a delivery id, got ${String(after)}.`);
  }
  return after;
}

/** `DeliveryQueue.list`'s `eventId`, when given: an event id (a string). */
export function listEventId(options: DeliveryListOptions): string | undefined {
  const eventId = options.eventId;
  if (eventId !== undefined && typeof eventId !== "string") {
    throw new TypeError(`DeliveryQueue.list: eventId must be an event id, got ${String(eventId)}.`);
  }
  return eventId;
}

/** `DeliveryQueue.list`'s `lastErrorKind`, when given: a {@link DeliveryErrorKind}. */
export function listLastErrorKind(options: DeliveryListOptions): DeliveryErrorKind | undefined {
  const kind = options.lastErrorKind;
  if (kind !== undefined && !DELIVERY_ERROR_KINDS.includes(kind)) {
    throw new TypeError(`DeliveryQueue.list: lastErrorKind must be a DeliveryErrorKind, got ${String(kind)}.`);
  }
  return kind;
}

/** A queue's `maxPayloadBytes`: a positive integer, or `Infinity` for none. @default DELIVERY_DEFAULTS.maxPayloadBytes */
export function maxPayloadBytes(owner: string, value: unknown): number {
  if (value === undefined) return DELIVERY_DEFAULTS.maxPayloadBytes;
  if (value === Number.POSITIVE_INFINITY) return value;
  return positiveInteger(owner, "maxPayloadBytes", value, "bytes");
}

// 255 at most, as every id here, and far below PostgreSQL's limit on an index entry; no control character (NUL,
// which PostgreSQL cannot store either, among them), as isWebhookId says.
const MAX_EVENT_ID_LENGTH = 255;

/**
 * The event as every delivery sends it (its JSON), refused with `payload_too_large` past `max` bytes of UTF-8, and
 * with `invalid_event` for an id no delivery can carry: it is the `webhook-id` header field, and the first part of the
 * signed content `<id>.<timestamp>.<body>`, which the signer refuses with a "." in the id. Such a delivery was
 * claimed and handed back at every lease end, never attempted (or, with U+0000, refused by PostgreSQL alone).
 */
export function eventPayload(event: WebhookEvent, max: number): string {
  const id: unknown = event?.id;
  if (!isWebhookId(id) || id.length > MAX_EVENT_ID_LENGTH) {
    throw new WebhookDeliveryError(
      "invalid_event",
      `DeliveryQueue.publish: the event id must be 1 to 255 characters that a header field can carry (visible ASCII or Latin-1, spaces only inside) other than ".", as it is the webhook-id header and signed as <id>.<timestamp>.<body>; got ${typeof id === "string" ? JSON.stringify(id.slice(0, 64)) : typeof id}.`,
    );
  }
  // An event not made by createEvent: its type is what subscriptions are looked up by (a pattern per dot of it, so a
  // megabyte of dots cost its length squared), and it must be one an endpoint's enabled_events can name.
  const type: unknown = event.type;
  if (!isEventType(type)) {
    throw new WebhookDeliveryError(
      "invalid_event",
      `DeliveryQueue.publish: the event type must be <resource>.<action> (lower-case words joined by dots, 128 characters at most), as createEvent checks it; got ${typeof type === "string" ? JSON.stringify(type.slice(0, 64)) : typeof type}.`,
    );
  }
  const payload = JSON.stringify(event);
  // A UTF-16 code unit is at most 3 bytes of UTF-8, so most payloads need no count.
  if (payload.length * 3 > max) {
    const bytes = Buffer.byteLength(payload, "utf8");
    if (bytes > max) {
      throw new WebhookDeliveryError(
        "payload_too_large",
        `DeliveryQueue.publish: the event ${event.id} is ${bytes} bytes of JSON, over maxPayloadBytes (${max}): send less data (an id the consumer fetches), or raise the queue's limit and the consumers' body limit together.`,
      );
    }
  }
  return payload;
}

/**
 * An attempt's `response` as every queue keeps it in its log: U+0000, which PostgreSQL's text cannot hold ("invalid
 * byte sequence for encoding UTF8: 0x00"), as U+FFFD. The response is the first bytes a receiver sent, decoded as
 * UTF-8, so any binary body has it; refused, the outcome could never be stored and the delivery went out again at
 * every lease end.
 */
export function logText(response: string | null): string | null {
  return typeof response === "string" && response.includes("\0") ? response.replaceAll("\0", "\uFFFD") : response;
}
