/**
 * `npm run demo`: the whole story of the example shop in a few seconds. Starts the shop and a webhook consumer
 * on free ports (in this process, over real HTTP on 127.0.0.1), registers the consumer, and walks through
 * idempotency keys, conditional requests, status transitions, signed webhooks with retries, `GET /orders`
 * filtered by status, and a forged webhook being refused.
 */
import { sign } from "rest-webhooks/webhooks/signing";
import { createConsumerApp } from "./consumer/app";
import { createShop } from "./shop/app";
import { loadConfig } from "./shop/config";
import { listen } from "./shop/server";
import { issueToken } from "./shop/tokens";

// A compressed retry schedule so the story fits in seconds: attempts at 0 s, +1 s, +2 s (the default is the
// Standard Webhooks schedule: 0, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h).
const RETRY_SCHEDULE_MS = [0, 1_000, 2_000];
const started = Date.now();
const clock = () => `${((Date.now() - started) / 1000).toFixed(2).padStart(6)} s`;
const say = (line: string) => console.log(`${clock()}  ${line}`);
let stepNumber = 0;
const step = (title: string) => console.log(`\n── ${++stepNumber}. ${title}`);
const summary: string[] = [];

// The demo runs in memory, for speed and a clean slate every time (`npm start` keeps its data in PGlite).
const loaded = loadConfig({
  ...process.env,
  WEBHOOKS_ALLOW_INSECURE_URLS: "1",
  DATABASE_URL: undefined,
  SHOP_STORAGE: "memory",
});
if (!loaded.ok) throw new Error(loaded.errors.join("; "));
const config = { ...loaded.shop, retryScheduleMs: RETRY_SCHEDULE_MS };
const shop = await createShop(config, {
  onDeliveryEvent: (event) => {
    if (event.type === "delivery.failed" && event.delivery.state.nextAttemptAt !== null) {
      const wait = (event.delivery.state.nextAttemptAt - Date.now()) / 1000;
      say(
        `[shop]      ${event.delivery.eventType} attempt ${event.delivery.state.attempts} failed; next in ${wait.toFixed(1)} s`,
      );
    } else if (event.type === "delivery.delivered") {
      say(`[shop]      ${event.delivery.eventType} delivered on attempt ${event.delivery.state.attempts}`);
    }
  },
});
const shopServer = await listen(shop.handler, { port: 0, host: "127.0.0.1", bodyLimit: config.bodyLimit });

// The consumer's secret comes from registering it, and registering needs its URL: listen first, then plug
// the consumer in once the secret is known.
let consumer: ReturnType<typeof createConsumerApp> | undefined;
const consumerServer = await listen(
  (request) => (consumer === undefined ? { status: 503, headers: {}, body: null } : consumer.handler(request)),
  { port: 0, host: "127.0.0.1" },
);
const webhookUrl = `${consumerServer.url}/webhooks`;

const adminToken = await issueToken(config.jwtSecret, { sub: "admin", admin: true });

async function call(
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; token?: string; form?: string } = {},
) {
  const headers: Record<string, string> = {
    authorization: `Bearer ${options.token ?? adminToken}`,
    ...options.headers,
  };
  let body: string | undefined;
  if (options.form !== undefined) {
    body = options.form;
    headers["content-type"] = "application/x-www-form-urlencoded";
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const response = await fetch(`${shopServer.url}${path}`, { method, headers, body });
  const text = await response.text();
  const shown = ["location", "etag", "idempotent-replayed"]
    .map((name) => (response.headers.get(name) === null ? "" : `  ${name}: ${response.headers.get(name)}`))
    .join("");
  say(`[client]    ${method} ${path} → ${response.status}${shown}`);
  return {
    status: response.status,
    headers: response.headers,
    json: () => JSON.parse(text) as Record<string, unknown>,
    list: () => JSON.parse(text) as unknown[],
  };
}

console.log(`rest-webhooks example shop demo (shop ${shopServer.url}, consumer ${webhookUrl})`);
console.log(
  `Webhook retries use a compressed demo schedule: ${RETRY_SCHEDULE_MS.map((ms) => `${ms / 1000} s`).join(", ")}.`,
);

step("Register the consumer as a webhook endpoint (form-encoded, API key)");
const endpoint = await call("POST", "/v1/webhook_endpoints", {
  token: config.apiKey,
  form: `url=${encodeURIComponent(webhookUrl)}&enabled_events[]=user.*&enabled_events[]=order.*`,
});
const secret = String(endpoint.json().secret);
const endpointId = String(endpoint.json().id);
say(`[shop]      endpoint ${endpointId}, signing secret ${secret.slice(0, 12)}…`);
consumer = createConsumerApp({
  secret,
  failFirst: 2,
  failTypes: "order.shipped",
  log: (line) => say(`[consumer]  ${line}`),
});
summary.push(`registered endpoint ${endpointId}`);

step("Create a user");
const user = await call("POST", "/users", { body: { name: "Ada Lovelace", tier: "gold" } });
const userId = String(user.json().id);
summary.push(`created user ${userId}`);

step("Place an order twice with one Idempotency-Key: one order");
const items = [
  { sku: "TEA-EARL-GREY", quantity: 2, unit_price: 450 },
  { sku: "MUG-BLUE", quantity: 1, unit_price: 1299 },
];
const key = { "idempotency-key": `"demo-${Date.now()}"` };
const first = await call("POST", `/users/${userId}/orders`, { body: { items }, headers: key });
const second = await call("POST", `/users/${userId}/orders`, { body: { items }, headers: key });
const orderPath = String(first.headers.get("location"));
const list = await call("GET", `/users/${userId}/orders`);
// A list is a JSON array; a next page would be in its Link header (rel="next").
const count = list.list().length;
say(
  `[client]    same Location twice: ${first.headers.get("location") === second.headers.get("location")}; orders in the list: ${count}; total computed by the server: ${first.json().total}`,
);
summary.push(`two POSTs with one Idempotency-Key → ${count} order (total ${first.json().total})`);

step("Conditional GET: the ETag we hold is current, so 304 and no body");
const read = await call("GET", orderPath);
const etag = String(read.headers.get("etag"));
const notModified = await call("GET", orderPath, { headers: { "if-none-match": etag } });
summary.push(`conditional GET → ${notModified.status}`);

step("Pay the order with If-Match, then try again with the now stale ETag");
await call("PATCH", orderPath, {
  body: { status: "paid" },
  headers: { "content-type": "application/merge-patch+json", "if-match": etag },
});
const stale = await call("PATCH", orderPath, {
  body: { status: "cancelled" },
  headers: { "content-type": "application/merge-patch+json", "if-match": etag },
});
say(`[client]    ${stale.status} ${stale.json().code}: ${stale.json().detail}`);
summary.push(`stale If-Match → ${stale.status}`);

step("Ship the order: the consumer fails the first two deliveries of order.shipped");
const shippedAt = Date.now();
await call("PATCH", orderPath, {
  body: { status: "shipped" },
  headers: { "content-type": "application/merge-patch+json" },
});
const orderId = orderPath.split("/").pop();
const deadline = Date.now() + 20_000;
while (!consumer.processed.some((p) => p.type === "order.shipped" && p.subject === orderId)) {
  if (Date.now() > deadline) throw new Error("order.shipped was not processed within 20 s");
  await new Promise((resolve) => setTimeout(resolve, 50));
}
say(`[client]    order.shipped processed ${((Date.now() - shippedAt) / 1000).toFixed(1)} s after shipping`);
const deliveries = await call("GET", `/v1/webhook_endpoints/${endpointId}/deliveries?status=delivered&limit=20`, {
  token: config.apiKey,
});
const shippedDelivery = (deliveries.json().data as { event_type: string; id: string; attempts: number }[]).find(
  (d) => d.event_type === "order.shipped",
);
const log = await call("GET", `/v1/webhook_endpoints/${endpointId}/attempts?delivery_id=${shippedDelivery?.id}`, {
  token: config.apiKey,
});
for (const attempt of [...(log.json().data as { attempt: number; status: number; started_at: string }[])].reverse()) {
  say(
    `[shop log]  attempt ${attempt.attempt} at +${((Date.parse(attempt.started_at) - shippedAt) / 1000).toFixed(1)} s → ${attempt.status}`,
  );
}
summary.push(`order.shipped delivered on attempt ${shippedDelivery?.attempts} (503, 503, then accepted)`);

step("List the shipped orders of every user (admin token), then the user's own (user token)");
const everyone = await call("GET", "/orders?status=shipped");
const own = await call("GET", "/orders?status=shipped", { token: await issueToken(config.jwtSecret, { sub: userId }) });
summary.push(
  `GET /orders?status=shipped → ${everyone.list().length} order for the admin, ${own.list().length} for ${userId}`,
);

step("A forged webhook (signed with the wrong secret) is refused");
const forgedBody = JSON.stringify({
  id: "evt_forged",
  type: "order.shipped",
  timestamp: new Date().toISOString(),
  data: { id: orderId },
});
const forgedHeaders = sign({
  id: "msg_forged",
  timestamp: Math.floor(Date.now() / 1000),
  body: forgedBody,
  secrets: "whsec_dGhpcyBpcyBub3QgdGhlIHNlY3JldCBhdCBhbGw=",
});
const forged = await fetch(webhookUrl, {
  method: "POST",
  headers: { ...forgedHeaders, "content-type": "application/json" },
  body: forgedBody,
});
say(`[attacker]  POST ${webhookUrl} → ${forged.status}`);
summary.push(`forged webhook → ${forged.status}`);

// Let the remaining deliveries land before the summary.
await shop.worker?.drained();
await new Promise((resolve) => setTimeout(resolve, 300));

console.log("\n── Summary");
for (const line of summary) console.log(`  • ${line}`);
console.log("  • the consumer processed, once each:");
for (const event of consumer.processed) console.log(`      ${event.type.padEnd(16)} ${event.subject ?? ""}`);
console.log(`Done in ${((Date.now() - started) / 1000).toFixed(1)} s.`);

await consumerServer.close();
await consumer.close();
await shopServer.close();
await shop.close();
