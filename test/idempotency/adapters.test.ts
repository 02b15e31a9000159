/** The middleware mounted on both adapters, as docs/idempotency.md shows it. */
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
