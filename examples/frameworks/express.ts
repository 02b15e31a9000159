/** Express 5: the API and the webhook consumer as middleware, in front of the app's own JSON routes. */
import express, { type Express } from "express";
import { adapt, webhookConsumer } from "rest-webhooks/express";
import type { WebhookConsumerOptions } from "rest-webhooks/webhooks/consumer";
import { itemsApi } from "./api";

export function createExpressApp(consumer: WebhookConsumerOptions): Express {
  return (
    express()
      // Reads the raw body itself: mount it before express.json() (after it, every delivery gets a 500
      // and onError a body_consumed error saying so). Every method: the consumer answers the others 405 with
      // Allow: POST (RFC 9110 §15.5.6), where .post() would leave them to Express's 404.
      .all("/webhooks", webhookConsumer(consumer))
      // The router answers its paths (404s and 405s included) and calls next() for the rest.
      .use(adapt(itemsApi()))
      .use(express.json())
      .get("/health", (_req, res) => {
        res.json({ ok: true });
      })
  );
}

// createExpressApp({ inbox, secrets: process.env.WEBHOOK_SECRET!, onStored: runner.wake }).listen(3000);
