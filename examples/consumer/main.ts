/**
 * A webhook consumer for the example shop, on node:http.
 *   WEBHOOK_SECRET=whsec_… PORT=4000 npx tsx examples/consumer/main.ts
 * Register it with the shop: POST /v1/webhook_endpoints url=http://127.0.0.1:4000/webhooks (the shop needs
 * WEBHOOKS_ALLOW_INSECURE_URLS=1 for a loopback http:// URL).
 */
import { z } from "zod";
import { listen } from "../shop/server";
import { createConsumerApp } from "./app";

const environment = z.object({
  WEBHOOK_SECRET: z.string().regex(/^whsec_/, "must be the endpoint's whsec_ secret"),
  PORT: z.coerce.number().int().min(0).max(65_535).default(4000),
  HOST: z.string().min(1).default("127.0.0.1"),
  CONSUMER_FAIL_FIRST: z.coerce.number().int().min(0).default(0),
  CONSUMER_FAIL_TYPES: z.string().default("*"),
});

const parsed = environment.safeParse(process.env);
if (!parsed.success) {
  console.error(
    `consumer: invalid configuration\n  ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("\n  ")}`,
  );
  process.exit(1);
}
const env = parsed.data;
const app = createConsumerApp({
  secret: env.WEBHOOK_SECRET,
  failFirst: env.CONSUMER_FAIL_FIRST,
  failTypes: env.CONSUMER_FAIL_TYPES,
  log: (line) => console.log(`consumer: ${line}`),
});
const server = await listen(app.handler, { port: env.PORT, host: env.HOST });
console.log(`consumer: listening on ${server.url} (any path receives webhooks)`);

async function stop(): Promise<void> {
  await server.close();
  await app.close();
  process.exit(0);
}
process.on("SIGINT", () => void stop());
process.on("SIGTERM", () => void stop());
