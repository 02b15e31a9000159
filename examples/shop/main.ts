/**
 * `npm start`: the example shop on node:http, configured by environment variables (see docs/example-shop.md).
 */
import { resolve } from "node:path";
import { createShop } from "./app";
import { loadConfig } from "./config";
import { listen } from "./server";
import { issueToken } from "./tokens";

const loaded = loadConfig(process.env);
if (!loaded.ok) {
  console.error(`shop: invalid configuration\n  ${loaded.errors.join("\n  ")}`);
  process.exit(1);
}
const { shop: config, server: serverConfig } = loaded;

/** Where the storage lives, as the start lines say it; a server URL without its password. */
function storageName(storage: typeof config.storage): string {
  if (storage.kind === "pglite") return `pglite, data in ${resolve(storage.dataDir)}`;
  if (storage.kind === "memory") return "memory: lost on restart";
  const url = new URL(storage.url);
  if (url.password !== "") url.password = "***";
  return `postgres at ${url.host}${url.pathname}, schema ${storage.schema}`;
}

// A storage that cannot be opened (a server that refuses, a missing database, a data directory another process holds)
// is a setup problem, said in one line like a busy port, not a stack trace.
const shop = await createShop(config, { log: (line) => console.log(`shop: ${line}`) }).catch((error: unknown) => {
  const { message, code } = error as { message?: unknown; code?: unknown };
  const why = typeof message === "string" && message !== "" ? message : String(code ?? error);
  console.error(`shop: cannot open the storage (${storageName(config.storage)}): ${why}`);
  process.exit(1);
});
const server = await listen(shop.handler, { ...serverConfig, bodyLimit: config.bodyLimit }).catch(async (error) => {
  await shop.close(); // releases the data directory
  const code = (error as { code?: unknown }).code;
  const where = `${serverConfig.host}:${serverConfig.port}`;
  if (code === "EADDRINUSE") {
    console.error(
      `shop: ${where} is already in use (another shop?). Stop it, or pick a port: PORT=3001 npm start (PORT=0 picks a free one).`,
    );
  } else if (code === "EACCES") {
    console.error(
      `shop: not allowed to listen on ${where}: ports below 1024 need privileges; pick another with PORT=…`,
    );
  } else if (code === "EADDRNOTAVAIL") {
    console.error(`shop: ${serverConfig.host} is not an address of this machine; set HOST (default 127.0.0.1).`);
  } else throw error;
  process.exit(1);
});

const where =
  config.storage.kind === "pglite"
    ? `pglite, data in ${resolve(config.storage.dataDir)}`
    : config.storage.kind === "postgres"
      ? `postgres, schema ${config.storage.schema}`
      : "memory: lost on restart";
console.log(`shop: listening on ${server.url} (storage: ${where})`);
console.log(`shop: OpenAPI description at ${server.url}/openapi.json`);
if (loaded.generated.includes("SHOP_API_KEY")) {
  console.log(`shop: SHOP_API_KEY was not set; generated for this run: ${config.apiKey}`);
}
if (loaded.generated.includes("SHOP_JWT_SECRET")) {
  console.log("shop: SHOP_JWT_SECRET was not set; generated one for this run. An admin token for it (1 h):");
  console.log(`  ${await issueToken(config.jwtSecret, { sub: "admin", admin: true })}`);
}
if (config.allowInsecureWebhookUrls)
  console.log("shop: WEBHOOKS_ALLOW_INSECURE_URLS=1: http:// and loopback URLs accepted");

let stopping = false;
async function stop(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log(`shop: ${signal}, shutting down`);
  await server.close();
  await shop.close();
  process.exit(0);
}
process.on("SIGINT", () => void stop("SIGINT"));
process.on("SIGTERM", () => void stop("SIGTERM"));
