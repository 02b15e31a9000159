import Fastify from "fastify";
import { describe, it } from "vitest";
import { restWebhooks, webhookConsumer } from "../../src/fastify";
import { json } from "../../src/http";
import { traceWebhookReceipt } from "../../src/otel";
import { createRouter } from "../../src/routing";
import { createMemoryInbox } from "../../src/webhooks/consumer/memory";

describe("rest-webhooks/fastify types", () => {
  it("registers with typed options, prefix included", async () => {
    const app = Fastify();
    await app.register(restWebhooks, { handler: createRouter(), bodyLimit: 1024, prefix: "/api" });
    await app.register(restWebhooks, { handler: () => json(200, {}) });
    await app.register(webhookConsumer, { url: "/webhooks", inbox: createMemoryInbox(), secrets: "whsec_x" });
    const inbox = createMemoryInbox();
    await app.register(webhookConsumer, { url: "/traced", inbox, secrets: "whsec_x", wrap: traceWebhookReceipt });
  });

  it("refuses missing options", async () => {
    const app = Fastify();
    // @ts-expect-error: handler is required
    await app.register(restWebhooks, { bodyLimit: 1024 });
    // @ts-expect-error: url is required
    await app.register(webhookConsumer, { inbox: createMemoryInbox(), secrets: "whsec_x" });
    // @ts-expect-error: wrap returns a handler, not a response
    await app.register(webhookConsumer, {
      url: "/w",
      inbox: createMemoryInbox(),
      secrets: "x",
      wrap: () => json(200, {}),
    });
  });
});
