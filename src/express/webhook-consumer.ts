import { consumerAdapterOptions } from "../node/consumer-adapter-options";
import { createWebhookConsumer, type WebhookConsumerOptions } from "../webhooks/consumer/consumer-handler";
import { adaptBodies, type ExpressMiddleware } from "./adapt";

/**
 * A webhook consumer (`createWebhookConsumer`) as Express middleware that reads the raw body itself, so the
 * signature is checked on the bytes the provider sent. Mount it before `express.json()`: mounted after a parser
 * that consumed the body, each delivery gets a 500 (the provider retries) and `onError` an
 * `ExpressIntegrationError` `body_consumed` saying what to change — never a signature failure.
 *
 * A delivery with a `Content-Encoding` (gzip…) gets the node adapter's answer, 415 `unsupported_content_coding`,
 * also behind an `express.raw()` that decoded it: the consumer refuses a coding from the headers alone. With
 * `parse: "none"` node verifies the coded bytes as sent, which an `express.raw()` that decoded them cannot give back:
 * that delivery is the 500 `body_consumed`, never a signature checked on decoded bytes.
 * @param options the consumer's options; its `bodyLimit` (default 1 MiB) and `onError` serve the adapter too.
 * @example
 * const runner = startWebhookProcessor(processor); // rest-webhooks/webhooks/consumer/node
 * app.post("/webhooks", webhookConsumer({ inbox, secrets: process.env.WEBHOOK_SECRET!, onStored: runner.wake }));
 * app.use(express.json());
 */
export function webhookConsumer(options: WebhookConsumerOptions): ExpressMiddleware {
  const handler = createWebhookConsumer(options);
  // The consumer answers a coded body 415 before reading it, unless it keeps the bytes (parse "none").
  const decodedBodies = options.parse === "none" ? "refuse" : "pass";
  return adaptBodies(handler, consumerAdapterOptions(options), decodedBodies);
}
