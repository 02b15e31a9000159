import { sign } from "../signing/sign";
import type { DeliveryRecord } from "./delivery-queue";
import { activeSecrets, type WebhookEndpoint } from "./endpoint";

/** An HTTP request ready for the dispatcher. */
export interface DeliveryRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * Builds one attempt's request: the same `webhook-id` (the event id) on every attempt, a fresh timestamp and fresh
 * signatures by every active secret (Standard Webhooks, "Signature scheme"; several signatures during a rotation).
 * With `traceparent` (the delivery's, when the worker propagates trace context) the request carries that header.
 * The endpoint's `headers` are added, never in place of these.
 */
export function buildDeliveryRequest(
  delivery: Pick<DeliveryRecord, "eventId" | "payload">,
  endpoint: Pick<WebhookEndpoint, "url" | "secrets"> & Partial<Pick<WebhookEndpoint, "headers">>,
  now: number,
  userAgent = "rest-webhooks",
  traceparent?: string,
): DeliveryRequest {
  const signed = sign({
    id: delivery.eventId,
    timestamp: Math.floor(now / 1000),
    body: delivery.payload,
    secrets: activeSecrets(endpoint, now),
  });
  const headers: Record<string, string> = {
    // The endpoint's own first: the fields below are the delivery's, and win over one stored by hand.
    ...endpoint.headers,
    "content-type": "application/json",
    "user-agent": userAgent,
    "webhook-id": signed["webhook-id"],
    "webhook-timestamp": signed["webhook-timestamp"],
    "webhook-signature": signed["webhook-signature"],
  };
  // W3C Trace Context §3.2: the receiver continues the publisher's trace. Only when asked: it tells the receiver
  // about our tracing (the worker's `propagateTraceContext`).
  if (traceparent !== undefined) headers.traceparent = traceparent;
  return { url: endpoint.url, headers, body: delivery.payload };
}

/**
 * Whether a request built for `endpoint` at `builtAt` is the one building it at `now` would give: the same signed
 * second (Standard Webhooks signs `webhook-timestamp` in seconds) and no secret of the endpoint expiring in between.
 * So a worker may sign a delivery while it waits for its turn and send that signature.
 */
export function signedAsOf(endpoint: Pick<WebhookEndpoint, "secrets">, builtAt: number, now: number): boolean {
  if (Math.floor(builtAt / 1000) !== Math.floor(now / 1000) || now < builtAt) return false;
  for (const entry of endpoint.secrets) {
    if (entry.expiresAt !== null && entry.expiresAt > builtAt && entry.expiresAt <= now) return false;
  }
  return true;
}
