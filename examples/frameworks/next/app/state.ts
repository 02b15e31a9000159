/**
 * The Next.js example's app, made once per server. In a real app the inbox is `createPostgresInbox` (route
 * handlers may run in several processes) and the processor runs in a worker, not in the route.
 */
import type { WebhookConsumerOptions } from "rest-webhooks/webhooks/consumer";
import { createMemoryInbox } from "rest-webhooks/webhooks/consumer/memory";
import { createFetchApp } from "../../fetch-app";

export const inbox = createMemoryInbox();

let app: ((request: Request) => Promise<Response>) | undefined;

/** The Fetch app, created on first use (when the environment is set). */
export function fetchApp(options: Partial<WebhookConsumerOptions> = {}): (request: Request) => Promise<Response> {
  app ??= createFetchApp({ inbox, secrets: process.env.WEBHOOK_SECRET ?? "", ...options });
  return app;
}
