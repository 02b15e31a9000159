import { z } from "zod";
import type { AttemptRecord } from "./attempt";
import type { DeliveryRecord } from "./delivery-queue";
import { DISABLED_REASONS, type WebhookEndpoint } from "./endpoint";
import { endpointHeadersSchema, endpointHeaderValue } from "./endpoint-headers";
import { ENDPOINT_SECRET_PATTERN, ENDPOINT_SECRET_RULE, isEndpointSecret } from "./endpoint-secret";
import { eventPatternSchema } from "./event-type";
import { refusingProtoKey } from "./proto-key";
import { SHOWN_ERROR_KINDS, shownAttempt, shownErrorKind } from "./unresolved-view";

/**
 * The `enabled_events` of a create or replace, as the API checks them: 1 to 256 patterns. The admin runs the same check
 * on what it is handed, so a caller bypassing the API stores nothing the API would refuse.
 */
export const endpointEventsInput = z.array(eventPatternSchema).min(1).max(256);
/**
 * The slowest `rate_limit` an endpoint may ask for: one delivery a day, in deliveries per second. The pacer turns a
 * rate into a whole number of deliveries per period of whole milliseconds; far below this (1e-300 per second) it has
 * no such period and refuses the rate on every admission, which would hold the endpoint's deliveries for good.
 */
export const MIN_RATE_LIMIT = 1 / 86_400;
/** The fastest `rate_limit` an endpoint may ask for, in deliveries per second. */
export const MAX_RATE_LIMIT = 100_000;
/** The most `metadata` keys an endpoint keeps (Stripe's limit, as are the key and value lengths). */
export const MAX_METADATA_KEYS = 50;
/** The longest `metadata` key, in UTF-16 code units. */
export const MAX_METADATA_KEY_LENGTH = 40;
/** The longest `metadata` value, in UTF-16 code units. */
export const MAX_METADATA_VALUE_LENGTH = 500;

// A JSON number, as the document's `type: number` says ("5" is refused). A form's rate is decimal text, which the
// router reads (`form: true`: `16`, `0.5`; not `0x10`, `1e1`, `+5`, `05`), and its empty value is null, lifting the
// limit as JSON's null does.
const rateLimit = z
  .number()
  .min(MIN_RATE_LIMIT, "rate_limit must be at least one delivery per day (1/86400 per second).")
  .max(MAX_RATE_LIMIT)
  .nullable();
// Keys a plain object treats as more than data: zod skips a "__proto__" key without a word (assigning it would set
// the prototype), and the other two shadow what every object inherits. Refused, never silently dropped.
const RESERVED_KEYS: readonly string[] = ["__proto__", "constructor", "prototype"];
const RESERVED = "__proto__, constructor and prototype are reserved metadata keys.";
const metadataKey = z
  .string()
  .min(1)
  .max(MAX_METADATA_KEY_LENGTH)
  .refine((key) => !RESERVED_KEYS.includes(key), { message: RESERVED })
  .meta({ not: { enum: [...RESERVED_KEYS] }, description: RESERVED });
const metadataValue = z.string().max(MAX_METADATA_VALUE_LENGTH);
// Before the record sees it: the record never hands "__proto__" to the key schema.
const metadataRecord = <V extends z.ZodType>(value: V) =>
  refusingProtoKey(
    z
      .record(metadataKey, value)
      .refine((record) => Object.keys(record).length <= MAX_METADATA_KEYS, {
        message: `metadata has at most ${MAX_METADATA_KEYS} keys.`,
      })
      .meta({ maxProperties: MAX_METADATA_KEYS }),
    RESERVED,
  );
const metadata = metadataRecord(metadataValue);

// Before the record sees it, as for metadata.
const headerRecord = <V extends z.ZodType>(value: V) =>
  refusingProtoKey(endpointHeadersSchema(value), "__proto__ is not a field name an endpoint may set.");
const headers = headerRecord(endpointHeaderValue);
/**
 * The `headers` of a create or replace body, as the API checks them (names lower-cased): the admin runs the same
 * check on what it is handed, so a caller bypassing the API stores nothing the API would refuse.
 */
export const endpointHeadersInput = headers;

const secret = z.string().refine(isEndpointSecret, ENDPOINT_SECRET_RULE).meta({
  pattern: ENDPOINT_SECRET_PATTERN,
  description:
    "The signing secret to use instead of a new one, e.g. the one another sender gave the consumer: whsec_ and the base64 of 24 to 64 bytes.",
});

/** Body of `POST /v1/webhook_endpoints/:id/rotate_secret`: none, or the new secret to use (else one is generated). */
export const rotateSecretBody = z.strictObject({ secret: secret.optional() }).optional();

/**
 * The longest endpoint URL, in characters: as sent, and as kept once normalized (an IDN host in punycode, a
 * non-ASCII path percent-encoded), so the `url` an endpoint shows can always be sent back.
 */
export const MAX_ENDPOINT_URL_LENGTH = 2048;

// The URL rules live in the URL policy (url-policy.ts), which the API runs after the parse.
const url = z.string().min(1).max(MAX_ENDPOINT_URL_LENGTH).meta({
  description:
    "The absolute URL deliveries are POSTed to: https (http only where the API allows it), no user name or password, a host that resolves to public addresses only unless the API allow-lists it (else 422 insecure_scheme, invalid_url, forbidden_address or unresolvable_host).",
});

/** Body of `POST /v1/webhook_endpoints` (JSON or form; `enabled_events[]` repeated). */
export const createEndpointSchema = z.strictObject({
  url,
  // A form's `enabled_events=x` sent once is the router's one-item list (OpenAPI 3.1 form, explode); in JSON a string
  // is refused, as the document's `type: array` says.
  enabled_events: endpointEventsInput,
  description: z.string().max(512).optional(),
  metadata: metadata.optional(),
  headers: headers.optional(),
  rate_limit: rateLimit.optional(),
  secret: secret.optional(),
  // A form's `true` and `false` are read by the router (`form: true`); in JSON "true" is refused.
  all_tenants: z.boolean().optional().meta({
    description:
      "The operator's endpoints only: receive every tenant's events besides the operator's own (set at creation, never changed).",
  }),
});

/** Body of `POST /v1/webhook_endpoints/:id` (every field optional). */
export const updateEndpointSchema = z.strictObject({
  url: url.optional(),
  enabled_events: endpointEventsInput.optional(),
  description: z.string().max(512).optional(),
  metadata: metadata.optional(),
  headers: headers.optional(),
  rate_limit: rateLimit.optional(),
  status: z.enum(["enabled", "disabled"]).optional(),
});

/**
 * Body of `PATCH /v1/webhook_endpoints/:id`: the fields of {@link updateEndpointSchema}, where a JSON Merge Patch
 * (RFC 7396 §2) may also send `null`: a metadata key set to null is removed, `metadata: null` removes them all,
 * `description: null` empties it and `rate_limit: null` lifts the limit.
 */
export const endpointPatchSchema = z.strictObject({
  url: url.optional(),
  enabled_events: endpointEventsInput.optional(),
  description: z.string().max(512).nullable().optional(),
  metadata: metadataRecord(metadataValue.nullable()).nullable().optional(),
  headers: headerRecord(endpointHeaderValue.nullable()).nullable().optional(),
  rate_limit: rateLimit.optional(),
  status: z.enum(["enabled", "disabled"]).optional(),
});

/** Input of creating an endpoint (snake_case, as the API takes it). */
export type CreateEndpointInput = z.infer<typeof createEndpointSchema>;
/** Input of updating an endpoint (snake_case, as the API takes it). */
export type UpdateEndpointInput = z.infer<typeof updateEndpointSchema>;

const dateTime = z.iso.datetime();

/** The public JSON of an endpoint (snake_case, like Stripe's). */
export const endpointJsonSchema = z
  .object({
    id: z.string(),
    object: z.literal("webhook_endpoint"),
    url: z.string(),
    enabled_events: z.array(z.string()),
    status: z.enum(["enabled", "disabled"]),
    disabled_reason: z.enum(DISABLED_REASONS).nullable(),
    description: z.string(),
    metadata: z.record(z.string(), z.string()),
    headers: z.record(z.string(), z.string()).meta({
      description: "Header fields added to every request to the endpoint (names in lower case); not signed.",
    }),
    rate_limit: z.number().nullable(),
    tenant: z.string().nullable().meta({
      description: "The tenant that owns it (set at creation, never changed); null for the operator's own.",
    }),
    all_tenants: z.boolean().meta({ description: "An operator's endpoint that receives every tenant's events." }),
    created_at: dateTime,
    secret: z.string().optional().meta({ description: "The signing secret: only on creation and rotation." }),
  })
  .meta({ id: "WebhookEndpoint" });

// Never `ssrf_blocked`: a forbidden address a name resolved to reads as `dns`, as at registration (unresolved-view.ts).
const shownErrorKindSchema = z.enum(SHOWN_ERROR_KINDS).nullable().meta({
  description:
    "Why the last attempt failed. dns: the host does not resolve to a public address that may receive webhooks (no address, or one the provider refuses: not told apart).",
});

/** The public JSON of a delivery. */
export const deliveryJsonSchema = z
  .object({
    id: z.string(),
    object: z.literal("webhook_delivery"),
    event_id: z.string(),
    event_type: z.string(),
    endpoint_id: z.string(),
    tenant: z.string().nullable().meta({
      description:
        "The tenant the event was published for (its id is unique within it), null for the operator's events: an all_tenants endpoint receives each tenant's event of one id.",
    }),
    status: z.enum(["pending", "failed", "delivered", "exhausted"]),
    attempts: z.number().int(),
    next_attempt_at: dateTime.nullable(),
    last_attempt_at: dateTime.nullable(),
    last_status: z.number().int().nullable(),
    last_error_kind: shownErrorKindSchema,
    delivered_at: dateTime.nullable(),
    created_at: dateTime,
  })
  .meta({ id: "WebhookDelivery" });

/** The public JSON of one attempt in the delivery log. */
export const attemptJsonSchema = z
  .object({
    id: z.string().meta({
      description: "The line's id, given by the queue: the starting_after of the page of older lines.",
    }),
    object: z.literal("webhook_attempt"),
    delivery_id: z.string(),
    event_id: z.string(),
    attempt: z.number().int(),
    started_at: dateTime,
    duration_ms: z.number().int(),
    status: z.number().int().nullable(),
    error_kind: shownErrorKindSchema,
    response: z.string().nullable(),
  })
  .meta({ id: "WebhookAttempt" });

/** A Stripe-style list object of `item`. */
export function listJsonSchema<T extends z.ZodType>(item: T) {
  return z.object({ object: z.literal("list"), data: z.array(item), has_more: z.boolean() });
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The public JSON of an endpoint; `secret` only when asked for (on creation and rotation: it is shown once). */
export function endpointJson(endpoint: WebhookEndpoint, withSecret = false): z.input<typeof endpointJsonSchema> {
  const out: z.input<typeof endpointJsonSchema> = {
    id: endpoint.id,
    object: "webhook_endpoint",
    url: endpoint.url,
    enabled_events: [...endpoint.enabledEvents],
    status: endpoint.status,
    disabled_reason: endpoint.disabledReason,
    description: endpoint.description,
    metadata: endpoint.metadata,
    headers: endpoint.headers,
    rate_limit: endpoint.rateLimit,
    tenant: endpoint.tenant,
    all_tenants: endpoint.allTenants,
    created_at: new Date(endpoint.createdAt).toISOString(),
  };
  if (withSecret) out.secret = endpoint.secrets[endpoint.secrets.length - 1]?.secret;
  return out;
}

/** The public JSON of a delivery. */
export function deliveryJson(delivery: DeliveryRecord): z.input<typeof deliveryJsonSchema> {
  const s = delivery.state;
  return {
    id: delivery.id,
    object: "webhook_delivery",
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    endpoint_id: delivery.endpointId,
    tenant: delivery.tenant ?? null,
    status: s.status,
    attempts: s.attempts,
    next_attempt_at: iso(s.nextAttemptAt),
    last_attempt_at: iso(s.lastAttemptAt),
    last_status: s.lastStatus,
    last_error_kind: shownErrorKind(s.lastErrorKind),
    delivered_at: iso(s.deliveredAt),
    created_at: new Date(delivery.createdAt).toISOString(),
  };
}

/** The public JSON of one attempt (a failure on the host name shown as {@link shownAttempt} says). */
export function attemptJson(logged: AttemptRecord): z.input<typeof attemptJsonSchema> {
  const attempt = shownAttempt(logged);
  return {
    id: attempt.id,
    object: "webhook_attempt",
    delivery_id: attempt.deliveryId,
    event_id: attempt.eventId,
    attempt: attempt.attempt,
    started_at: new Date(attempt.startedAt).toISOString(),
    duration_ms: attempt.durationMs,
    status: attempt.status,
    error_kind: attempt.errorKind,
    response: attempt.response,
  };
}
