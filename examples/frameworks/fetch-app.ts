/**
 * The app for Fetch runtimes (Hono, Next.js, Bun, Deno, Cloudflare Workers): the API with the webhook consumer
 * as one more route, through the Fetch adapter.
 */
import { type AdapterOptions, adapt } from "rest-webhooks/fetch";
import { createWebhookConsumer, type WebhookConsumerOptions } from "rest-webhooks/webhooks/consumer";
import { itemsApi } from "./api";

export function createFetchApp(
  consumer: WebhookConsumerOptions,
  options: AdapterOptions = {},
): (request: Request) => Promise<Response> {
  const webhooks = createWebhookConsumer(consumer);
  // request.body is the raw bytes: the consumer verifies the signature on them.
  const router = itemsApi().route("POST", "/webhooks", { name: "webhooks.receive" }, ({ request }) =>
    webhooks(request),
  );
  return adapt(router.handler(), options);
}
