/**
 * `rest-webhooks listen`, spawned: the example shop delivers an order.created event to it, it verifies and
 * prints the event and forwards it to a receiver that verifies with the `standardwebhooks` package; an
 * unsigned request is refused with the library's diagnosis.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../examples/shop/storage/memory";
import { client, type Receiver, type RunningShop, startReceiver, startShop } from "../examples/shop-harness";
import { type RunningCli, startCli } from "./run-cli";

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("rest-webhooks listen", () => {
  let shop: RunningShop;
  let receiver: Receiver;
  let listening: RunningCli;
  let url: string;

  beforeAll(async () => {
    shop = await startShop(createMemoryStorage(), { deliver: true, retryScheduleMs: [0, 25, 25] });
    receiver = await startReceiver();
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    const endpoint = await client(shop.server.url, shop.config.apiKey)("POST", "/v1/webhook_endpoints", {
      body: { url: `${url}/webhooks`, enabled_events: ["order.created"] },
    });
    expect(endpoint.status).toBe(201);
    const secret = endpoint.json<{ secret: string }>().secret;
    receiver.secret = secret;
    listening = startCli([
      "listen",
      "--port",
      String(port),
      "--secret",
      secret,
      "--forward-to",
      receiver.url,
      "--json",
    ]);
    await listening.line(/"listening"/);
  });
  afterAll(async () => {
    await listening?.stop();
    await receiver?.close();
    await shop?.close();
  });

  it("verifies a delivery from the shop, prints it and forwards it", async () => {
    const user = await shop.api("POST", "/users", { body: { name: "Ada", tier: "gold" } });
    const order = await shop.api("POST", `/users/${user.json<{ id: string }>().id}/orders`, {
      body: { items: [{ sku: "TEA-1", quantity: 1, unit_price: 450 }] },
    });
    expect(order.status).toBe(201);
    const line = JSON.parse(await listening.line(/"type":"order\.created"/)) as Record<string, unknown>;
    expect(line).toMatchObject({ verified: true, type: "order.created", forwardStatus: 204 });
    expect(line.id).toMatch(/^evt_|^msg_/);
    expect(receiver.received.map((r) => r.type)).toContain("order.created");
    expect(receiver.received.find((r) => r.type === "order.created")?.data).toMatchObject({
      id: order.json<{ id: string }>().id,
    });
  });

  it("refuses an unsigned request with 400 and prints why", async () => {
    const response = await fetch(`${url}/webhooks`, { method: "POST", body: "{}" });
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    const line = JSON.parse(await listening.line(/"verified":false/)) as Record<string, unknown>;
    expect(line).toMatchObject({ verified: false, code: "missing_header", path: "/webhooks" });
  });
});
