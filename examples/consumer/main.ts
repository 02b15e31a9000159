/**
 * A webhook consumer for the example shop, on node:http.
 *   WEBHOOK_SECRET=whsec_… PORT=4000 npx tsx examples/consumer/main.ts
 * Register it with the shop: POST /v1/webhook_endpoints url=http://127.0.0.1:4000/webhooks (the shop needs
 * WEBHOOKS_ALLOW_INSECURE_URLS=1 for a loopback http:// URL).
 */
import { listen } from "../shop/server";
import { createConsumerApp } from "./app";
import { loadConsumerSettings } from "./config";

const loaded = loadConsumerSettings(process.env);
if (!loaded.ok) {
  console.error(`consumer: invalid configuration\n  ${loaded.errors.join("\n  ")}`);
  process.exit(1);
}
const env = loaded.settings;
const app = createConsumerApp({
  secret: env.secret,
  failFirst: env.failFirst,
  failTypes: env.failTypes,
  log: (line) => console.log(`consumer: ${line}`),
});
// A busy or forbidden address is a setup problem, said in one line as the shop says it, not a stack trace.
const server = await listen(app.handler, { port: env.port, host: env.host }).catch(async (error: unknown) => {
  await app.close();
  const code = (error as { code?: unknown }).code;
  const where = `${env.host}:${env.port}`;
  if (code === "EADDRINUSE") {
    console.error(`consumer: ${where} is already in use. Pick another port: PORT=4001 (PORT=0 picks a free one).`);
  } else if (code === "EACCES") {
    console.error(
      `consumer: not allowed to listen on ${where}: ports below 1024 need privileges; pick another with PORT=…`,
    );
  } else if (code === "EADDRNOTAVAIL") {
    console.error(`consumer: ${env.host} is not an address of this machine; set HOST (default 127.0.0.1).`);
  } else throw error;
  process.exit(1);
});
console.log(`consumer: listening on ${server.url} (any path receives webhooks)`);

async function stop(): Promise<void> {
  await server.close();
  await app.close();
  process.exit(0);
}
process.on("SIGINT", () => void stop());
process.on("SIGTERM", () => void stop());
