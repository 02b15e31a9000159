/**
 * The app for Fetch runtimes (Hono, Next.js, Bun, Deno, Cloudflare Workers): the API with the webhook consumer
 * as one more route, through the Fetch adapter.
 */
import { type AdapterOptions, adapt } from "rest-webhooks/fetch";
import type { Router } from "rest-webhooks/routing";
import { createWebhookConsumer, type WebhookConsumerOptions } from "rest-webhooks/webhooks/consumer";
import { itemsApi } from "./api";

/** The app's routes: the items API, and the consumer at `POST /webhooks`. */
export function createAppRouter(consumer: WebhookConsumerOptions): Router {
  const webhooks = createWebhookConsumer(consumer);
  // request.body is the raw bytes: the consumer verifies the signature on them.
  return itemsApi().route("POST", "/webhooks", { name: "webhooks.receive" }, ({ request }) => webhooks(request));
}

export function createFetchApp(
  consumer: WebhookConsumerOptions,
  options: AdapterOptions = {},
): (request: Request) => Promise<Response> {
  return adapt(createAppRouter(consumer).handler(), options);
}
