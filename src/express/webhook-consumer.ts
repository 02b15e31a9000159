import { consumerAdapterOptions } from "../node/consumer-adapter-options";
import { createWebhookConsumer, type WebhookConsumerOptions } from "../webhooks/consumer/consumer-handler";
import { adapt, type ExpressMiddleware } from "./adapt";

/**
 * A webhook consumer (`createWebhookConsumer`) as Express middleware that reads the raw body itself, so the
 * signature is checked on the bytes the provider sent. Mount it before `express.json()`: mounted after a parser
 * that consumed the body, each delivery gets a 500 (the provider retries) and `onError` an
 * `ExpressIntegrationError` `body_consumed` saying what to change — never a signature failure.
 * @param options the consumer's options; its `bodyLimit` (default 1 MiB) and `onError` serve the adapter too.
 * @example
 * const runner = startWebhookProcessor(processor); // rest-webhooks/webhooks/consumer/node
 * app.post("/webhooks", webhookConsumer({ inbox, secrets: process.env.WEBHOOK_SECRET!, onStored: runner.wake }));
 * app.use(express.json());
 */
export function webhookConsumer(options: WebhookConsumerOptions): ExpressMiddleware {
  return adapt(createWebhookConsumer(options), consumerAdapterOptions(options));
}
