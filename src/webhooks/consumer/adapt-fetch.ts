import { adapt } from "../../fetch/adapt";
import type { AdapterOptions } from "../../http/adapter-options";
import type { Handler } from "../../http/message";

/** Options of {@link adaptWebhookConsumerFetch}: the Fetch adapter's, plus when to run after-send work. */
export interface WebhookConsumerFetchOptions extends AdapterOptions {
  /**
   * Runs an after-send callback (the consumer's `onStored`) once the returned `Response` has been
   * handed to the runtime; the same as the Fetch adapter's `afterSend`, which wins when both are set.
   * @default a microtask queued after the runtime's own reaction to the returned promise
   */
  defer?: (callback: () => void) => void;
}

/**
 * Adapts a handler that serves a webhook consumer (alone, or mounted in a router) to the Fetch shape.
 * The same as `adapt` from `rest-webhooks/fetch`, which runs the after-send callback a response
 * carries (the consumer's `onStored`) only after the `Response` has been returned: a processor woken
 * by it never starts before the runtime has the acknowledgement.
 * @param handler the consumer from {@link createWebhookConsumer}, or any handler that returns its responses.
 * @param options the Fetch adapter's options (`bodyLimit`, `onError`, `afterSend`) and `defer`.
 * @example
 * const consumer = createWebhookConsumer({ inbox, secrets: Deno.env.get("WEBHOOK_SECRET")!, onStored: runner.wake });
 * Deno.serve(adaptWebhookConsumerFetch(consumer, { defer: (run) => setTimeout(run, 0) }));
 */
export function adaptWebhookConsumerFetch(
  handler: Handler,
  options: WebhookConsumerFetchOptions = {},
): (request: Request) => Promise<Response> {
  const { defer, ...rest } = options;
  return adapt(handler, { ...rest, afterSend: options.afterSend ?? defer });
}
