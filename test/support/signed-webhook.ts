/**
 * One signed webhook, end to end, for every integration: a provider signs a delivery (Standard Webhooks), the
 * integration's consumer verifies it on the raw bytes and stores it, the processor runs the handler once.
 */
import type { WebhookConsumerOptions } from "../../src/webhooks/consumer";
import { createWebhookProcessor } from "../../src/webhooks/consumer";
import { createMemoryInbox } from "../../src/webhooks/consumer/memory";
import { generateSecret, sign } from "../../src/webhooks/signing";

/** An inbox, a processor that records what it handled, and the consumer options that feed them. */
export function webhookFixture() {
  const secret = generateSecret();
  const inbox = createMemoryInbox();
  const handled: unknown[] = [];
  const processor = createWebhookProcessor({ inbox }).on("order.*", ({ event }) => {
    handled.push(event.payload);
  });
  const options: WebhookConsumerOptions = { inbox, secrets: secret };
  /** A delivery as the provider sends it; the body has bytes `JSON.stringify` would not produce. */
  const delivery = (id: string) => {
    const body = `{ "type": "order.shipped",\n  "data": { "order": "${id}", "note": "caf\\u00e9" } }`;
    const timestamp = Math.floor(Date.now() / 1000);
    return {
      body,
      headers: { "content-type": "application/json", ...sign({ id, timestamp, body, secrets: secret }) },
    };
  };
  /** Runs the processor and returns what its handler saw. */
  const drain = async () => {
    await processor.processDue();
    return handled;
  };
  return { secret, inbox, options, delivery, drain };
}

/** The payload the handler sees for `delivery(id)`. */
export const expectedPayload = (id: string) => ({ type: "order.shipped", data: { order: id, note: "café" } });
