import { createHash } from "node:crypto";
import type { RequestHeaders } from "../../http/message";
import { github } from "../signing/github";
import { shopify } from "../signing/shopify";

/** What the id and type of a received event are derived from. */
export interface EventIdentityInput {
  /**
   * The id verification reported: Standard Webhooks `webhook-id`, GitHub `X-GitHub-Delivery`,
   * Shopify `X-Shopify-Webhook-Id`, Stripe's `evt_…` payload id, Slack's `event_id`; or none.
   * GitHub's and Shopify's are unsigned headers: a captured delivery replayed with a new one verifies.
   */
  id: string | undefined;
  /** The verified payload. */
  payload: unknown;
  /** The request's header fields (lower-case names). */
  headers: RequestHeaders;
  /** The raw body: the signed bytes, which a replay cannot change. */
  body: Uint8Array;
  /** The verifying scheme's name. */
  scheme: string;
}

function field(value: unknown, name: string): unknown {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>)[name] : undefined;
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

// No provider signs these headers: they are read only for the scheme that sends them, so that a captured delivery
// of another scheme, replayed with one added, is neither stored again under a new id nor routed as another type.
const GITHUB = github.name;
const SHOPIFY = shopify.name;

/**
 * The de-duplication key of a delivery, the same on every redelivery of one event:
 * 1. on a Shopify delivery, `X-Shopify-Event-Id` — one Shopify event can reach an endpoint through several
 *    subscriptions, each with its own `X-Shopify-Webhook-Id`;
 * 2. the id verification reported (see {@link EventIdentityInput.id}), which providers keep on retries
 *    and manual redeliveries;
 * 3. otherwise `sha256:` + the hex SHA-256 of the raw body (Slack slash commands and interactivity):
 *    a retry re-sends the same bytes, while a payload-level `id` of an unknown provider may name a
 *    resource rather than the event, and de-duplicating on it would drop events.
 *
 * On GitHub and Shopify deliveries the key is an unsigned header (neither scheme signs an id or a timestamp): it
 * stops the provider's retries, but a captured delivery replayed under a new id header is a new event. Where that
 * matters, key `eventId` on the signed body (`sha256:` + its SHA-256, as in 3.) or a field of the payload.
 * @param input the verified delivery: the id verification reported, payload, headers, raw body, scheme.
 * @example eventId: (input) => `stripe:${defaultEventId(input)}` // one inbox, several providers
 * @example eventId: ({ body }) => `sha256:${createHash("sha256").update(body).digest("hex")}` // replays: duplicates
 * @see docs/webhooks-consumers.md, "De-duplication: which id is the event's id"
 */
export function defaultEventId(input: EventIdentityInput): string {
  const shopifyEvent = input.scheme === SHOPIFY ? nonEmpty(input.headers["x-shopify-event-id"]) : undefined;
  const found = shopifyEvent ?? nonEmpty(input.id);
  return found ?? `sha256:${createHash("sha256").update(input.body).digest("hex")}`;
}

/**
 * The routing type of a delivery: on a GitHub delivery `X-GitHub-Event` plus the payload's `action`
 * (`issues.opened`); on a Shopify delivery `X-Shopify-Topic` with `/` as `.` (`orders.create`); Slack's inner
 * `event.type` for `event_callback`; otherwise the payload's `type` (Standard Webhooks, Stripe); or "".
 * @param input the verified delivery.
 * @example eventType: (input) => (input.headers["x-acme-topic"] ?? defaultEventType(input))
 */
export function defaultEventType(input: EventIdentityInput): string {
  const { headers, payload, scheme } = input;
  const event = scheme === GITHUB ? nonEmpty(headers["x-github-event"]) : undefined;
  if (event !== undefined) {
    const action = nonEmpty(field(payload, "action"));
    return action === undefined ? event : `${event}.${action}`;
  }
  const topic = scheme === SHOPIFY ? nonEmpty(headers["x-shopify-topic"]) : undefined;
  if (topic !== undefined) return topic.replaceAll("/", ".");
  const type = nonEmpty(field(payload, "type"));
  if (type === "event_callback") return nonEmpty(field(field(payload, "event"), "type")) ?? type;
  return type ?? "";
}
