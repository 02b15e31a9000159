/** Fastify 5: the API and the webhook consumer as plugins; Fastify's own routes and JSON parser stay as they are. */
import Fastify, { type FastifyInstance } from "fastify";
import { restWebhooks, webhookConsumer } from "rest-webhooks/fastify";
import type { WebhookConsumerOptions } from "rest-webhooks/webhooks/consumer";
import { itemsApi } from "./api";

export async function createFastifyApp(consumer: WebhookConsumerOptions): Promise<FastifyInstance> {
  const app = Fastify();
  // Bodies reach the consumer raw, through the plugin's own content-type parser.
  await app.register(webhookConsumer, { url: "/webhooks", ...consumer });
  // One catch-all route; a path the router does not know goes to Fastify's not-found handler.
  await app.register(restWebhooks, { handler: itemsApi() });
  app.get("/health", async () => ({ ok: true }));
  return app;
}

// await (await createFastifyApp({ inbox, secrets: process.env.WEBHOOK_SECRET! })).listen({ port: 3000 });
