import { type AdapterOptions, bodyLimitOf, logError } from "../http/adapter-options";
import type { WebhookConsumerOptions } from "../webhooks/consumer/consumer-handler";

/**
 * The adapter options a mounted webhook consumer runs with: its own `bodyLimit` (so the adapter does not refuse
 * first) and its `onError`, which the adapter calls with a request whenever it has one.
 */
export function consumerAdapterOptions(options: WebhookConsumerOptions): AdapterOptions {
  const onError = options.onError;
  return {
    bodyLimit: bodyLimitOf(options, "createWebhookConsumer"),
    ...(onError === undefined
      ? {}
      : { onError: (error, request) => (request === undefined ? logError(error) : onError(error, request)) }),
  };
}
