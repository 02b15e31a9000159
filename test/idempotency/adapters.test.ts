/** The middleware mounted on both adapters, as docs/idempotency.md shows it. */
import { createServer as createHttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adapt as expressAdapt } from "../../src/express";
import { adapt } from "../../src/fetch";
import { type Handler, json } from "../../src/http";
import { idempotency, MemoryIdempotencyStore } from "../../src/idempotency";
import { createServer } from "../../src/node";

function app() {
  let orders = 0;
  const createOrder: Handler = () => {
    orders++;
    return json(201, { id: `ord_${orders}`, note: "caf\u00e9 \u2615" }, { location: `/orders/ord_${orders}` });
  };
  const protect = idempotency({
    store: new MemoryIdempotencyStore(),
    identify: (request) => request.headers.authorization ?? "anonymous",
    required: true,
  });
  return { handler: protect(createOrder), orders: () => orders };
}

const init = (key?: string): RequestInit => ({
  method: "POST",
  headers: {
    "content-type": "application/json",
    authorization: "Bearer t1",
    ...(key ? { "idempotency-key": key } : {}),
  },
  body: '{"sku":"book"}',
});

describe("on node:http", () => {
  const { handler, orders } = app();
  const server = createServer(handler);
  let base = "";
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("replays the same bytes with Idempotent-Replayed: true", async () => {
    const first = await fetch(`${base}/orders`, init('"k-1"'));
    const firstBytes = Buffer.from(await first.arrayBuffer());
    const second = await fetch(`${base}/orders`, init('"k-1"'));
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.headers.get("location")).toBe("/orders/ord_1");
    expect(Buffer.from(await second.arrayBuffer()).equals(firstBytes)).toBe(true);
    expect(orders()).toBe(1);
  });

  it("answers a missing key with a 400 problem", async () => {
    const res = await fetch(`${base}/orders`, init());
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(((await res.json()) as { code: string }).code).toBe("idempotency_key_missing");
  });

  // Regression: node:http reads a 0xA0 byte as U+00A0, which String.prototype.trim removed: the key "k-nbsp" was
  // found inside the field and its response replayed. RFC 9110 §5.6.3: only SP and HTAB are OWS.
  it("answers 400 to a key wrapped in a 0xA0 byte, never replaying the key inside it", async () => {
    expect((await fetch(`${base}/orders`, init('"k-nbsp"'))).status).toBe(201);
    const ran = orders();
    const res = await fetch(`${base}/orders`, init("\u00a0k-nbsp"));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe("idempotency_key_invalid");
    expect(orders()).toBe(ran);
  });
});

describe("on the Fetch adapter", () => {
  const { handler, orders } = app();
  const fetchHandler = adapt(handler);

  it("replays the same bytes with Idempotent-Replayed: true", async () => {
    const first = await fetchHandler(new Request("http://api.test/orders", init("k-2")));
    const firstBytes = Buffer.from(await first.arrayBuffer());
    const second = await fetchHandler(new Request("http://api.test/orders", init("k-2")));
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(Buffer.from(await second.arrayBuffer()).equals(firstBytes)).toBe(true);
    expect(orders()).toBe(1);
  });

  it("answers a reused key with a 422 problem", async () => {
    await fetchHandler(new Request("http://api.test/orders", init('"k-3"')));
    const reused = await fetchHandler(
      new Request("http://api.test/orders", { ...init('"k-3"'), body: '{"sku":"pen"}' }),
    );
    expect(reused.status).toBe(422);
    expect(((await reused.json()) as { code: string }).code).toBe("idempotency_key_reused");
  });
});

describe("regression: on Express, two mounts sharing one store", () => {
  // Each mount's handler saw the path "/" (mount-relative), so POST /refunds was replayed the order's 201.
  const store = new MemoryIdempotencyStore();
  const protect = idempotency({ store, identify: () => "acct_1" });
  const ran: string[] = [];
  const created = (kind: string): Handler => {
    const handler: Handler = (request) => {
      ran.push(`${kind} ${request.path}`);
      return json(201, { created: kind });
    };
    return protect(handler);
  };
  const app = express()
    .use("/orders", expressAdapt(created("order")))
    .use("/refunds", expressAdapt(created("refund")));
  const server = createHttpServer(app);
  let base = "";
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("fingerprints the target as received: the key reused on the other mount is 422, a retry on the same is replayed", async () => {
    const order = await fetch(`${base}/orders?x=1`, init('"k-mount"'));
    expect(order.status).toBe(201);
    const refund = await fetch(`${base}/refunds?x=1`, init('"k-mount"'));
    expect(refund.status).toBe(422);
    expect(((await refund.json()) as { code: string }).code).toBe("idempotency_key_reused");
    const retry = await fetch(`${base}/orders?x=1`, init('"k-mount"'));
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    // The handler still sees the path below its mount point.
    expect(ran).toStrictEqual(["order /"]);
  });
});
