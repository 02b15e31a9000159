import pg from "pg";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it, vi } from "vitest";
import { adapt as adaptFetch } from "../../../src/fetch/index";
import {
  createWebhookConsumer,
  createWebhookProcessor,
  type Inbox,
  type WebhookConsumerOptions,
} from "../../../src/webhooks/consumer/index";
import { createMemoryInbox, type MemoryInbox } from "../../../src/webhooks/memory/inbox/index";
import { startWebhookProcessor } from "../../../src/webhooks/node/consumer/index";
import { createPostgresInbox } from "../../../src/webhooks/postgres/inbox/index";
import { generateSecret, github, shopify, sign, signWith, slack, stripe } from "../../../src/webhooks/signing/index";
import { latch, listen, nowSeconds } from "./support";

const secret = generateSecret();
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

async function serve(options: Partial<WebhookConsumerOptions> & { inbox?: Pick<Inbox, "add"> } = {}) {
  const inbox = createMemoryInbox();
  const handler = createWebhookConsumer({ inbox, secrets: secret, onError: () => {}, ...options });
  const server = await listen(handler, { onError: () => {} });
  closers.push(server.close);
  return { inbox, url: server.url };
}

function delivery(id: string, payload: unknown = { type: "order.shipped", data: { order: id } }) {
  const body = JSON.stringify(payload);
  return {
    body,
    headers: { "content-type": "application/json", ...sign({ id, timestamp: nowSeconds(), body, secrets: secret }) },
  };
}

function post(url: string, d: { body: string; headers: Record<string, string> }): Promise<Response> {
  return fetch(url, { method: "POST", body: d.body, headers: d.headers });
}

describe("createWebhookConsumer over node:http", () => {
  it("acknowledges a valid delivery with 202 and stores it pending, without running any handler", async () => {
    const { inbox, url } = await serve();
    const response = await post(url, delivery("msg_1"));
    expect(response.status).toBe(202);
    expect(await response.text()).toBe("");
    expect(await inbox.get("msg_1")).toMatchObject({
      id: "msg_1",
      type: "order.shipped",
      payload: { type: "order.shipped", data: { order: "msg_1" } },
      scheme: "standard-webhooks",
      state: "pending",
      attempts: 0,
    });
  });

  it("answers 2xx before the event handler has run (a latch holds the handler until the client has its reply)", async () => {
    const inbox = createMemoryInbox();
    const processor = createWebhookProcessor({ inbox });
    const replied = latch();
    const processed = latch();
    const order: string[] = [];
    processor.on("order.*", async () => {
      order.push("handler started");
      await replied.promise; // would deadlock if the reply waited for processing
      order.push("handler finished");
      processed.open();
    });
    const runner = startWebhookProcessor(processor, { idleMs: 5 });
    closers.push(runner.stop);
    const { url } = await serve({ inbox, onStored: runner.wake });
    const response = await post(url, delivery("msg_latch"));
    expect(response.status).toBe(202);
    order.push("client got 202");
    expect(processed.isOpen).toBe(false);
    replied.open();
    await processed.promise;
    expect(order.filter((step) => step !== "handler started")).toEqual(["client got 202", "handler finished"]);
    await vi.waitFor(async () => expect((await inbox.get("msg_latch"))?.state).toBe("done"));
  });

  it("answers 200 when configured to", async () => {
    const { url } = await serve({ status: 200 });
    expect((await post(url, delivery("msg_1"))).status).toBe(200);
  });

  describe("refuses without storing", () => {
    it("a bad signature: 400 problem", async () => {
      const { inbox, url } = await serve();
      const d = delivery("msg_bad");
      const tampered = { ...d, body: d.body.replace("order", "0rder") };
      const response = await post(url, tampered);
      expect(response.status).toBe(400);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      expect((await response.json()).code).toBe("webhook_no_matching_signature");
      expect(inbox.size).toBe(0);
    });

    it("a signature made with another secret: 400", async () => {
      const { inbox, url } = await serve();
      const body = "{}";
      const headers = sign({ id: "msg_x", timestamp: nowSeconds(), body, secrets: generateSecret() });
      expect((await post(url, { body, headers })).status).toBe(400);
      expect(inbox.size).toBe(0);
    });

    it("missing signature headers: 400", async () => {
      const { inbox, url } = await serve();
      const response = await post(url, { body: "{}", headers: { "content-type": "application/json" } });
      expect(response.status).toBe(400);
      expect((await response.json()).code).toBe("webhook_missing_header");
      expect(inbox.size).toBe(0);
    });

    it("a timestamp outside the tolerance: 400", async () => {
      const { inbox, url } = await serve({ toleranceSeconds: 60 });
      const body = "{}";
      const headers = sign({ id: "msg_old", timestamp: nowSeconds() - 3_600, body, secrets: secret });
      const response = await post(url, { body, headers });
      expect(response.status).toBe(400);
      expect((await response.json()).code).toBe("webhook_timestamp_too_old");
      expect(inbox.size).toBe(0);
    });

    it("a body over the handler's limit: 413", async () => {
      const { inbox, url } = await serve({ bodyLimit: 64 });
      const response = await post(url, delivery("msg_big", { type: "x.y", data: "x".repeat(100) }));
      expect(response.status).toBe(413);
      expect((await response.json()).code).toBe("body_too_large");
      expect(inbox.size).toBe(0);
    });

    it("a body over the adapter's bodyLimit: 413", async () => {
      const inbox = createMemoryInbox();
      const server = await listen(createWebhookConsumer({ inbox, secrets: secret }), { bodyLimit: 64 });
      closers.push(server.close);
      const response = await post(server.url, delivery("msg_big", { type: "x.y", data: "x".repeat(100) }));
      expect(response.status).toBe(413);
      expect(inbox.size).toBe(0);
    });

    it("another method: 405 with Allow: POST", async () => {
      const { url } = await serve();
      const response = await fetch(url);
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe("POST");
    });
  });

  it("stores an event delivered 5 times once, acknowledges every time, and processes it once", async () => {
    const { inbox, url } = await serve();
    const d = delivery("msg_dup");
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await post(url, d)).status);
    // Redeliveries are signed afresh; the id is what stays.
    const resigned = delivery("msg_dup");
    statuses.push((await post(url, resigned)).status);
    expect(statuses).toEqual([202, 202, 202, 202, 202, 202]);
    expect(inbox.size).toBe(1);
    const handler = vi.fn();
    const processor = createWebhookProcessor({ inbox }).on("*", handler);
    await processor.processDue();
    await processor.processDue();
    expect(handler).toHaveBeenCalledTimes(1);
  });

  describe("when the inbox cannot store the event", () => {
    it("answers 503 with Retry-After so the provider retries, and reports the error", async () => {
      const onError = vi.fn();
      const broken: Pick<Inbox, "add"> = {
        add: async () => {
          throw new Error("disk full");
        },
      };
      const { url } = await serve({ inbox: broken, onError });
      const response = await post(url, delivery("msg_lost"));
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe("5");
      expect((await response.json()).code).toBe("inbox_unavailable");
      expect(onError).toHaveBeenCalledTimes(1);
    });

    it("answers 503 when PostgreSQL is unreachable", async () => {
      const pool = new pg.Pool({ host: "127.0.0.1", port: 1, user: "nobody", connectionTimeoutMillis: 2_000 });
      closers.push(() => pool.end());
      const { url } = await serve({ inbox: createPostgresInbox({ pool }) });
      expect((await post(url, delivery("msg_pg_down"))).status).toBe(503);
    });

    it("stores the event on the provider's retry once the inbox is back", async () => {
      const inbox = createMemoryInbox();
      let down = true;
      const flaky: Pick<Inbox, "add"> = {
        add: async (event) => {
          if (down) throw new Error("unavailable");
          return inbox.add(event);
        },
      };
      const { url } = await serve({ inbox: flaky });
      const d = delivery("msg_retry");
      expect((await post(url, d)).status).toBe(503);
      down = false;
      expect((await post(url, d)).status).toBe(202);
      expect((await inbox.get("msg_retry"))?.state).toBe("pending");
    });
  });

  it("accepts what the standardwebhooks package signs (interop)", async () => {
    const { inbox, url } = await serve();
    const body = JSON.stringify({ type: "invoice.paid", data: {} });
    const headers = new Webhook(secret).sign("msg_peer", new Date(), body);
    const response = await post(url, {
      body,
      headers: { "webhook-id": "msg_peer", "webhook-timestamp": String(nowSeconds()), "webhook-signature": headers },
    });
    expect(response.status).toBe(202);
    expect((await inbox.get("msg_peer"))?.type).toBe("invoice.paid");
  });
});

describe("dedup key and event type per scheme", () => {
  const literal = "It's a Secret to Everybody";

  async function deliver(
    options: Partial<WebhookConsumerOptions>,
    body: string,
    headers: Record<string, string>,
  ): Promise<MemoryInbox> {
    const { inbox, url } = await serve({ secrets: literal, ...options });
    for (let i = 0; i < 2; i++) expect((await post(url, { body, headers })).status).toBe(202);
    expect(inbox.size).toBe(1);
    return inbox;
  }

  it("GitHub: X-GitHub-Delivery; type is X-GitHub-Event plus the action", async () => {
    const body = JSON.stringify({ action: "opened", issue: { number: 1 } });
    const headers = { ...signWith(github, { id: "d-1", body, secrets: literal }), "x-github-event": "issues" };
    const inbox = await deliver({ scheme: github }, body, headers);
    expect(await inbox.get("d-1")).toMatchObject({ type: "issues.opened", scheme: "github" });
  });

  it("Stripe: the event id in the payload; type is the payload's type", async () => {
    const secretKey = "whsec_stripe_test";
    const body = JSON.stringify({ id: "evt_1", object: "event", type: "invoice.paid", data: {} });
    const headers = signWith(stripe, { timestamp: nowSeconds(), body, secrets: secretKey });
    const inbox = await deliver({ scheme: stripe, secrets: secretKey }, body, headers);
    expect(await inbox.get("evt_1")).toMatchObject({ type: "invoice.paid", scheme: "stripe" });
  });

  it("Shopify: X-Shopify-Event-Id over X-Shopify-Webhook-Id; type is the topic with dots", async () => {
    const body = JSON.stringify({ id: 42 });
    const headers = {
      ...signWith(shopify, { id: "wh-1", body, secrets: literal }),
      "x-shopify-topic": "orders/create",
      "x-shopify-event-id": "ev-1",
    };
    const inbox = await deliver({ scheme: shopify }, body, headers);
    expect(await inbox.get("ev-1")).toMatchObject({ type: "orders.create" });
  });

  it("Slack Events API: event_id; type is the inner event's type", async () => {
    const body = JSON.stringify({ type: "event_callback", event_id: "Ev1", event: { type: "app_mention" } });
    const headers = signWith(slack, { timestamp: nowSeconds(), body, secrets: literal });
    const inbox = await deliver({ scheme: slack }, body, headers);
    expect(await inbox.get("Ev1")).toMatchObject({ type: "app_mention" });
  });

  it("Slack slash command (no id anywhere): the SHA-256 of the raw body", async () => {
    const body = "command=%2Fdeploy&text=prod&trigger_id=13345224609.738474920.8088930838d88f008e0";
    const headers = signWith(slack, { timestamp: nowSeconds(), body, secrets: literal });
    const inbox = await deliver({ scheme: slack, parse: "form", eventType: () => "slash.deploy" }, body, headers);
    const { createHash } = await import("node:crypto");
    const key = `sha256:${createHash("sha256").update(body).digest("hex")}`;
    expect(await inbox.get(key)).toMatchObject({ type: "slash.deploy", payload: { command: "/deploy", text: "prod" } });
  });

  it("a custom eventId wins over the default", async () => {
    const d = delivery("msg_1");
    const inbox = await deliver({ secrets: secret, eventId: ({ id }) => `acme:${id}` }, d.body, d.headers);
    expect(await inbox.get("acme:msg_1")).toBeDefined();
  });
});

describe("createWebhookConsumer on the Fetch adapter", () => {
  it("verifies, stores and answers 202; a bad signature gets 400", async () => {
    const inbox = createMemoryInbox();
    const app = adaptFetch(createWebhookConsumer({ inbox, secrets: secret }));
    const d = delivery("msg_fetch");
    const ok = await app(
      new Request("http://localhost/webhooks", { method: "POST", body: d.body, headers: d.headers }),
    );
    expect(ok.status).toBe(202);
    const bad = await app(
      new Request("http://localhost/webhooks", { method: "POST", body: `${d.body} `, headers: d.headers }),
    );
    expect(bad.status).toBe(400);
    expect(inbox.size).toBe(1);
  });
});
