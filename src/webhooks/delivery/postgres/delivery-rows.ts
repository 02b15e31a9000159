import { z } from "zod";
import { decodeRow } from "../../../postgres/rows";
import { epochMsOf } from "../../../postgres/sql-time";
import { type AttemptRecord, DELIVERY_ERROR_KINDS, type DeliveryErrorKind } from "../attempt";
import { attemptId } from "../attempt-id";
import type { ClaimedDelivery, DeliveryRecord } from "../delivery-queue";
import { DISABLED_REASONS, type WebhookEndpoint } from "../endpoint";
import { WebhookDeliveryError } from "../errors";

const time = z.number();
const errorKind = z.enum(DELIVERY_ERROR_KINDS as [DeliveryErrorKind, ...DeliveryErrorKind[]]).nullable();

/** The columns every delivery read selects (of the table aliased `t`, when given), times as epoch ms. */
export function deliveryColumns(t = ""): string {
  const c = (column: string) => (t === "" ? column : `${t}.${column}`);
  const ms = (column: string) => `${epochMsOf(c(column))} AS ${column}`;
  return [
    c("id"),
    c("event_id"),
    c("event_type"),
    c("endpoint_id"),
    c("tenant"),
    c("payload"),
    ms("created_at"),
    c("status"),
    c("attempts"),
    ms("next_attempt_at"),
    ms("last_attempt_at"),
    c("last_status"),
    c("last_error_kind"),
    ms("delivered_at"),
    c("traceparent"),
    c("tracestate"),
  ].join(", ");
}

/** The columns every endpoint read selects, times as epoch ms. */
export const ENDPOINT_COLUMNS = `id, url, enabled_events, secrets, status, disabled_reason,
  ${epochMsOf("disabled_at")} AS disabled_at, description, metadata, headers, rate_limit, ${epochMsOf("failing_since")} AS failing_since,
  ${epochMsOf("created_at")} AS created_at, tenant, all_tenants`;

/** The columns every attempt-log read selects; `seq` as text, as a bigint may pass 2^53. */
export const ATTEMPT_COLUMNS = `seq::text AS seq, delivery_id, endpoint_id, event_id, attempt, ${epochMsOf("started_at")} AS started_at,
  duration_ms, status, error_kind, response`;

const deliveryRow = z.object({
  id: z.string(),
  event_id: z.string(),
  event_type: z.string(),
  endpoint_id: z.string(),
  payload: z.string(),
  created_at: time,
  status: z.enum(["pending", "failed", "delivered", "exhausted"]),
  attempts: z.number().int(),
  next_attempt_at: time.nullable(),
  last_attempt_at: time.nullable(),
  last_status: z.number().int().nullable(),
  last_error_kind: errorKind,
  delivered_at: time.nullable(),
  traceparent: z.string().nullable(),
  tracestate: z.string().nullable(),
  tenant: z.string().nullable(),
});

// A jsonb object of strings, as read (JSON.parse): zod's record would drop a "__proto__" key, which jsonb keeps as data
// and so does the memory store (EndpointStore answers alike on every store).
const stringRecord = z.custom<Record<string, string>>(
  (value) =>
    value !== null &&
    typeof value === "object" &&
    !Array.isArray(value) &&
    Object.values(value).every((entry) => typeof entry === "string"),
);

const endpointRow = z.object({
  id: z.string(),
  url: z.string(),
  enabled_events: z.array(z.string()),
  secrets: z.array(z.object({ secret: z.string(), expiresAt: time.nullable() })),
  status: z.enum(["enabled", "disabled"]),
  disabled_reason: z.enum(DISABLED_REASONS).nullable(),
  disabled_at: time.nullable(),
  description: z.string(),
  metadata: stringRecord,
  headers: stringRecord,
  rate_limit: z.number().nullable(),
  failing_since: time.nullable(),
  created_at: time,
  tenant: z.string().nullable(),
  all_tenants: z.boolean(),
});

const attemptRow = z.object({
  seq: z.string(),
  delivery_id: z.string(),
  endpoint_id: z.string(),
  event_id: z.string(),
  attempt: z.number().int(),
  started_at: time,
  duration_ms: z.number().int(),
  status: z.number().int().nullable(),
  error_kind: errorKind,
  response: z.string().nullable(),
});

const invalid = (what: string) => (cause: unknown) =>
  new WebhookDeliveryError("row_invalid", `A ${what} row cannot be decoded (written by another version?).`, { cause });

/** A delivery row as a record. */
export function toDelivery(row: unknown): DeliveryRecord {
  const r = decodeRow(deliveryRow, row, invalid("webhook_deliveries"));
  return {
    id: r.id,
    eventId: r.event_id,
    eventType: r.event_type,
    endpointId: r.endpoint_id,
    // '' is the operator's scope, NULL a row stored before migration delivery@14: neither names a tenant.
    ...(r.tenant === null || r.tenant === "" ? {} : { tenant: r.tenant }),
    payload: r.payload,
    createdAt: r.created_at,
    state: {
      status: r.status,
      attempts: r.attempts,
      nextAttemptAt: r.next_attempt_at,
      lastAttemptAt: r.last_attempt_at,
      lastStatus: r.last_status,
      lastErrorKind: r.last_error_kind,
      deliveredAt: r.delivered_at,
    },
    ...(r.traceparent === null ? {} : { traceparent: r.traceparent }),
    ...(r.tracestate === null ? {} : { tracestate: r.tracestate }),
  };
}

/**
 * A claimed delivery row as a claim: its record, its lease, and whether it is the operator's event. The tenant
 * column tells the three cases apart where the record cannot: a tenant, '' the operator's (as publish has stored
 * them since delivery@14), NULL a row stored before that migration, whose tenant is unknown (no `operatorEvent`).
 */
export function toClaim(row: unknown, leaseToken: string, leaseUntil: number): ClaimedDelivery {
  const record = toDelivery(row);
  const operator = (row as { tenant?: unknown }).tenant === "";
  return { ...record, leaseToken, leaseUntil, ...(operator ? { operatorEvent: true } : {}) };
}

/** An endpoint row as an endpoint. */
export function toEndpoint(row: unknown): WebhookEndpoint {
  const r = decodeRow(endpointRow, row, invalid("webhook_endpoints"));
  return {
    id: r.id,
    url: r.url,
    enabledEvents: r.enabled_events,
    secrets: r.secrets,
    status: r.status,
    disabledReason: r.disabled_reason,
    disabledAt: r.disabled_at,
    description: r.description,
    metadata: r.metadata,
    headers: r.headers,
    rateLimit: r.rate_limit,
    failingSince: r.failing_since,
    createdAt: r.created_at,
    tenant: r.tenant,
    allTenants: r.all_tenants,
  };
}

/** An attempt-log row as an attempt record. */
export function toAttempt(row: unknown): AttemptRecord {
  const r = decodeRow(attemptRow, row, invalid("webhook_attempts"));
  return {
    id: attemptId(r.seq),
    deliveryId: r.delivery_id,
    endpointId: r.endpoint_id,
    eventId: r.event_id,
    attempt: r.attempt,
    startedAt: r.started_at,
    durationMs: r.duration_ms,
    status: r.status,
    errorKind: r.error_kind,
    response: r.response,
  };
}
