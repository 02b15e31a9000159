import express from "express";
import { describe, expectTypeOf, it } from "vitest";
import { adapt, type ExpressIntegrationErrorCode, type ExpressMiddleware, webhookConsumer } from "../../src/express";
import { json } from "../../src/http";
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
});
