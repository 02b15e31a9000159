import type { Handler } from "../http/message";
import { consumerAdapterOptions } from "../node/consumer-adapter-options";
import { wrappedConsumer } from "../node/wrapped-consumer";
import { createWebhookConsumer, type WebhookConsumerOptions } from "../webhooks/consumer/consumer-handler";
import { adaptBodies, type ExpressMiddleware } from "./adapt";

/** Options of {@link webhookConsumer}: the consumer's, and what to wrap around the handler built from them. */
export interface ExpressWebhookConsumerOptions extends WebhookConsumerOptions {
  /**
   * Wraps the consumer's handler once, when the middleware is made: `traceWebhookReceipt` from `rest-webhooks/otel`
   * (its `receive webhook` span, parent and link as on the node adapter), or a handler of your own in front of the
   * consumer (a provider's handshake). The middleware keeps reading the body and answering as without it: a
   * `Content-Encoding` delivery still gets the consumer's 415, and the wrapped handler sees that answer.
   * @default none: the consumer's handler as built
   * @example
   * webhookConsumer({ inbox, secrets, wrap: traceWebhookReceipt })
   */
  wrap?: (handler: Handler) => Handler;
}

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
 * @param options the consumer's options; its `bodyLimit` (default 1 MiB) and `onError` serve the adapter too;
 * `wrap` wraps the handler built from them (tracing).
 * @example
 * const runner = startWebhookProcessor(processor); // rest-webhooks/webhooks/consumer/node
 * app.post("/webhooks", webhookConsumer({ inbox, secrets: process.env.WEBHOOK_SECRET!, onStored: runner.wake }));
 * app.use(express.json());
 */
export function webhookConsumer(options: ExpressWebhookConsumerOptions): ExpressMiddleware {
  const { wrap, ...consumer } = options;
  const handler = wrappedConsumer(createWebhookConsumer(consumer), wrap, "rest-webhooks/express webhookConsumer");
  // The consumer answers a coded body 415 before reading it, unless it keeps the bytes (parse "none"). A wrapper
  // sees the request the consumer sees, decoded bytes beside the Content-Encoding included, and the consumer's 415.
  const decodedBodies = consumer.parse === "none" ? "refuse" : "pass";
  return adaptBodies(handler, consumerAdapterOptions(consumer), decodedBodies);
}
