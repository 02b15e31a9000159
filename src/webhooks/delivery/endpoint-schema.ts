import { z } from "zod";
import type { DeliveryRecord } from "./delivery-queue";
import type { WebhookEndpoint } from "./endpoint";
import { eventPatternSchema } from "./event-type";

// A form sends `enabled_events=x` once as a string; treat it as a one-item list.
const eventList = z.preprocess(
  (value) => (typeof value === "string" ? [value] : value),
  z.array(eventPatternSchema).min(1).max(256),
);
const rateLimit = z.preprocess(
  (value) => (value === "" ? null : typeof value === "string" ? Number(value) : value),
  z.number().positive().max(100_000).nullable(),
);
const metadata = z.record(z.string().min(1).max(40), z.string().max(500));

/** Body of `POST /v1/webhook_endpoints` (JSON or form; `enabled_events[]` repeated). */
export const createEndpointSchema = z.strictObject({
  url: z.string().min(1).max(2048),
  enabled_events: eventList,
  description: z.string().max(512).optional(),
  metadata: metadata.optional(),
  rate_limit: rateLimit.optional(),
});

/** Body of `POST /v1/webhook_endpoints/:id` (every field optional). */
export const updateEndpointSchema = z.strictObject({
  url: z.string().min(1).max(2048).optional(),
  enabled_events: eventList.optional(),
  description: z.string().max(512).optional(),
  metadata: metadata.optional(),
  rate_limit: rateLimit.optional(),
  status: z.enum(["enabled", "disabled"]).optional(),
});

/** Input of creating an endpoint. */
export type CreateEndpointInput = z.infer<typeof createEndpointSchema>;
/** Input of updating an endpoint. */
export type UpdateEndpointInput = z.infer<typeof updateEndpointSchema>;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * The public JSON of an endpoint (snake_case, like Stripe); `secret` only when asked for (on creation and
 * rotation — it is shown once).
 */
export function endpointJson(endpoint: WebhookEndpoint, withSecret = false): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: endpoint.id,
    object: "webhook_endpoint",
    url: endpoint.url,
    enabled_events: endpoint.enabledEvents,
    status: endpoint.status,
    disabled_reason: endpoint.disabledReason,
    description: endpoint.description,
    metadata: endpoint.metadata,
    rate_limit: endpoint.rateLimit,
    created_at: iso(endpoint.createdAt),
  };
  if (withSecret) out.secret = endpoint.secrets[endpoint.secrets.length - 1]?.secret;
  return out;
}

/** The public JSON of a delivery. */
export function deliveryJson(delivery: DeliveryRecord): Record<string, unknown> {
  const s = delivery.state;
  return {
    id: delivery.id,
    object: "webhook_delivery",
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    endpoint_id: delivery.endpointId,
    status: s.status,
    attempts: s.attempts,
    next_attempt_at: iso(s.nextAttemptAt),
    last_attempt_at: iso(s.lastAttemptAt),
    last_status: s.lastStatus,
    last_error_kind: s.lastErrorKind,
    delivered_at: iso(s.deliveredAt),
    created_at: iso(delivery.createdAt),
  };
}
