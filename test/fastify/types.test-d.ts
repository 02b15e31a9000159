import Fastify from "fastify";
import { describe, it } from "vitest";
import { restWebhooks, webhookConsumer } from "../../src/fastify";
import { json } from "../../src/http";
import { createRouter } from "../../src/routing";
import { createMemoryInbox } from "../../src/webhooks/consumer/memory";

describe("rest-webhooks/fastify types", () => {
  it("registers with typed options, prefix included", async () => {
    const app = Fastify();
    await app.register(restWebhooks, { handler: createRouter(), bodyLimit: 1024, prefix: "/api" });
    await app.register(restWebhooks, { handler: () => json(200, {}) });
    await app.register(webhookConsumer, { url: "/webhooks", inbox: createMemoryInbox(), secrets: "whsec_x" });
  });

  it("refuses missing options", async () => {
    const app = Fastify();
    // @ts-expect-error: handler is required
    await app.register(restWebhooks, { bodyLimit: 1024 });
    // @ts-expect-error: url is required
    await app.register(webhookConsumer, { inbox: createMemoryInbox(), secrets: "whsec_x" });
  });
});
