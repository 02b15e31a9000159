import express from "express";
import { describe, expectTypeOf, it } from "vitest";
import {
  adapt,
  type ExpressIntegrationErrorCode,
  type ExpressMiddleware,
  type ExpressWebhookConsumerOptions,
  webhookConsumer,
} from "../../src/express";
import { type Handler, json } from "../../src/http";
import { traceWebhookReceipt } from "../../src/otel";
import { createRouter } from "../../src/routing";
import { createMemoryInbox } from "../../src/webhooks/consumer/memory";

describe("rest-webhooks/express types", () => {
  it("mounts in Express 5 with use and route methods", () => {
    const app = express();
    app.use(adapt(() => json(200, {})));
    app.use("/api", adapt(createRouter()));
    app.post("/webhooks", webhookConsumer({ inbox: createMemoryInbox(), secrets: "whsec_x" }));
    app.post(
      "/raw",
      express.raw({ type: "*/*" }),
      adapt(() => json(200, {})),
    );
    expectTypeOf(adapt(createRouter())).toEqualTypeOf<ExpressMiddleware>();
  });

  it("takes a handler or a router, and the consumer's own options", () => {
    // @ts-expect-error: a string is neither
    adapt("/api");
    // @ts-expect-error: the consumer needs its secrets
    webhookConsumer({ inbox: createMemoryInbox() });
    expectTypeOf<ExpressIntegrationErrorCode>().toEqualTypeOf<"body_consumed">();
  });

  it("takes wrap, a Handler wrapper such as traceWebhookReceipt", () => {
    const secrets = "whsec_x";
    webhookConsumer({ inbox: createMemoryInbox(), secrets, wrap: traceWebhookReceipt });
    webhookConsumer({ inbox: createMemoryInbox(), secrets, wrap: (handler) => traceWebhookReceipt(handler) });
    expectTypeOf<ExpressWebhookConsumerOptions["wrap"]>().toEqualTypeOf<((handler: Handler) => Handler) | undefined>();
    // @ts-expect-error: wrap returns a handler, not a response
    webhookConsumer({ inbox: createMemoryInbox(), secrets, wrap: () => json(200, {}) });
  });
});
