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
 */
export function buildDeliveryRequest(
  delivery: Pick<DeliveryRecord, "eventId" | "payload">,
  endpoint: Pick<WebhookEndpoint, "url" | "secrets">,
  now: number,
  userAgent = "rest-webhooks",
): DeliveryRequest {
  const signed = sign({
    id: delivery.eventId,
    timestamp: Math.floor(now / 1000),
    body: delivery.payload,
    secrets: activeSecrets(endpoint, now),
  });
  return {
    url: endpoint.url,
    headers: {
      "content-type": "application/json",
      "user-agent": userAgent,
      "webhook-id": signed["webhook-id"],
      "webhook-timestamp": signed["webhook-timestamp"],
      "webhook-signature": signed["webhook-signature"],
    },
    body: delivery.payload,
  };
}
