import { adapt } from "../../fetch/adapt";
import type { AdapterOptions } from "../../http/adapter-options";
import type { Handler, HttpResponse } from "../../http/message";
import { takeAfterSend } from "./after-send";

/** Options of {@link adaptWebhookConsumerFetch}: the Fetch adapter's, plus when to run after-send work. */
export interface WebhookConsumerFetchOptions extends AdapterOptions {
  /**
   * Runs an after-send callback (the consumer's `onStored`) once the returned `Response` has been
   * handed to the runtime. A Fetch runtime does not say when it has written a response; pass your
   * runtime's later hook if it has one, e.g. `(run) => setTimeout(run, 0)` on Deno or Bun.
   * @default a microtask queued after the runtime's own reaction to the returned promise
   */
  defer?: (callback: () => void) => void;
}

/**
 * Adapts a handler that serves a webhook consumer (alone, or mounted in a router) to the Fetch shape,
 * like `adapt` from `rest-webhooks/fetch`, and runs the after-send callback a response carries (the
 * consumer's `onStored`) only after the `Response` has been returned: a processor woken by it never
 * starts before the runtime has the acknowledgement.
 * @param handler the consumer from {@link createWebhookConsumer}, or any handler that returns its responses.
 * @param options the Fetch adapter's options (`bodyLimit`, `onError`) and `defer`.
 * @example
 * const consumer = createWebhookConsumer({ inbox, secrets: Deno.env.get("WEBHOOK_SECRET")!, onStored: runner.wake });
 * Deno.serve(adaptWebhookConsumerFetch(consumer, { defer: (run) => setTimeout(run, 0) }));
 */
export function adaptWebhookConsumerFetch(
  handler: Handler,
  options: WebhookConsumerFetchOptions = {},
): (request: Request) => Promise<Response> {
  const defer = options.defer;
  return (native) => {
    let callback: (() => void) | undefined;
    const take = (response: HttpResponse) => {
      callback = takeAfterSend(response);
      return response;
    };
    // One adapter per request: the callback is tied to this request's response, and `adapt` is a few closures.
    const pending = adapt(async (request) => take(await handler(request)), options)(native);
    // Registered before the caller can await `pending`, this reaction runs first; the microtask it
    // queues runs after the caller's own reaction, which is when the caller holds the Response.
    pending.then(
      () => {
        if (callback === undefined) return;
        const run = callback;
        if (defer === undefined) queueMicrotask(run);
        else defer(run);
      },
      () => {},
    );
    return pending;
  };
}
