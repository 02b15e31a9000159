/** Hono: the Fetch app mounted on its paths; Hono's own routes beside it. Runs wherever Hono runs. */
import { Hono } from "hono";
import type { WebhookConsumerOptions } from "rest-webhooks/webhooks/consumer";
import { createFetchApp } from "./fetch-app";

export function createHonoApp(consumer: WebhookConsumerOptions): Hono {
  const app = createFetchApp(consumer);
  return (
    new Hono()
      .get("/health", (c) => c.json({ ok: true }))
      // c.req.raw is the untouched Request: do not call c.req.json() (or a validator) on these paths first.
      .all("/api/*", (c) => app(c.req.raw))
      // Every method: the router answers the others 405 with Allow (RFC 9110 §15.5.6), not Hono's 404.
      .all("/webhooks", (c) => app(c.req.raw))
  );
}

// export default createHonoApp({ inbox, secrets: env.WEBHOOK_SECRET }); // Bun, Deno, Workers
// serve({ fetch: createHonoApp(...).fetch, port: 3000 }); // @hono/node-server
