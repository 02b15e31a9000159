/**
 * The example consumer over real HTTP: signed deliveries (signed by the `standardwebhooks` package) are
 * acknowledged with 202 and processed once; bad signatures get 400; `failFirst` answers 503 first.
 */
import { randomUUID } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { type ConsumerApp, createConsumerApp } from "../../examples/consumer/app";
import { type Listening, listen } from "../../examples/shop/server";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

interface Running {
  app: ConsumerApp;
  server: Listening;
  lines: string[];
}

let running: Running | undefined;
afterEach(async () => {
  await running?.server.close();
  await running?.app.close();
  running = undefined;
});

async function start(options: { failFirst?: number; failTypes?: string } = {}): Promise<Running> {
  const lines: string[] = [];
  const app = createConsumerApp({ secret: SECRET, ...options, background: false, log: (line) => lines.push(line) });
  const server = await listen(app.handler, { port: 0, host: "127.0.0.1" });
  running = { app, server, lines };
  return running;
}

function deliver(url: string, event: { id: string; type: string; data: Record<string, unknown> }, secret = SECRET) {
  const body = JSON.stringify({ ...event, timestamp: new Date().toISOString() });
  const id = `msg_${event.id}`;
  const timestamp = new Date();
  const signature = new Webhook(secret).sign(id, timestamp, body);
  return fetch(`${url}/webhooks`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
      "webhook-signature": signature,
    },
    body,
  });
}

describe("the example consumer", () => {
  it("acknowledges with 202 and processes each event once, however often it is delivered", async () => {
    const { app, server } = await start();
    const event = { id: `evt_${randomUUID()}`, type: "order.shipped", data: { id: "ord_1" } };
    for (let i = 0; i < 3; i++) expect((await deliver(server.url, event)).status).toBe(202);
    await app.drain();
    expect(app.processed.map((p) => [p.type, p.subject])).toEqual([["order.shipped", "ord_1"]]);
  });

  it("refuses a bad signature with a 400 problem and processes nothing", async () => {
    const { app, server, lines } = await start();
    const event = { id: `evt_${randomUUID()}`, type: "order.created", data: { id: "ord_2" } };
    const reply = await deliver(server.url, event, "whsec_dGhpcyBpcyBub3QgdGhlIHNlY3JldCBhdCBhbGw=");
    expect(reply.status).toBe(400);
    expect(reply.headers.get("content-type")).toBe("application/problem+json");
    await app.drain();
    expect(app.processed).toEqual([]);
    expect(lines.some((line) => line.startsWith("refused a delivery"))).toBe(true);
  });

  it("fails the first deliveries of matching events with 503 when asked to", async () => {
    const { app, server } = await start({ failFirst: 2, failTypes: "order.shipped" });
    const shipped = { id: `evt_${randomUUID()}`, type: "order.shipped", data: { id: "ord_3" } };
    const created = { id: `evt_${randomUUID()}`, type: "order.created", data: { id: "ord_3" } };
    expect((await deliver(server.url, created)).status).toBe(202);
    expect((await deliver(server.url, shipped)).status).toBe(503);
    expect((await deliver(server.url, shipped)).status).toBe(503);
    expect((await deliver(server.url, shipped)).status).toBe(202);
    await app.drain();
    expect(app.processed.map((p) => p.type)).toEqual(["order.created", "order.shipped"]);
  });
});
