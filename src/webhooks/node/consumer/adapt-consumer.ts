import type { AdapterOptions } from "../../../http/adapter-options";
import type { Handler } from "../../../http/message";
import { adapt, type RequestListener } from "../../../node/adapt";

/**
 * Adapts a handler that serves a webhook consumer (alone, or mounted in a router) to a node:http
 * request listener. The same as `adapt` from `rest-webhooks/node`, which runs the after-send callback
 * a response carries (the consumer's `onStored`) on the response's `'finish'` event: a processor
 * woken by it never starts before the whole acknowledgement has been written. Kept as the name the
 * consumer docs use.
 * @param handler the consumer from `createWebhookConsumer`, or any handler that returns its responses.
 * @param options the node adapter's options (`bodyLimit`, `onError`).
 * @example
 * const runner = startWebhookProcessor(processor);
 * const consumer = createWebhookConsumer({ inbox, secrets: process.env.WEBHOOK_SECRET!, onStored: runner.wake });
 * http.createServer({ joinDuplicateHeaders: true }, adaptWebhookConsumer(consumer)).listen(3000);
 */
export function adaptWebhookConsumer(handler: Handler, options: AdapterOptions = {}): RequestListener {
  return adapt(handler, options);
}
