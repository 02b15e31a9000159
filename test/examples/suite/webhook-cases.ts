import { afterAll, beforeAll, expect, it } from "vitest";
import { eventually, type Receiver, type RunningShop, startReceiver } from "../shop-harness";

const ITEMS = [{ sku: "HOOK", quantity: 1, unit_price: 100 }];
const FORM = "application/x-www-form-urlencoded";

/** The endpoint API (API key, form bodies, secrets), signed deliveries, the delivery log and manual retry. */
export function webhookCases(shop: () => RunningShop): void {
  let receiver: Receiver;
  let endpointId: string;
  const admin = (method: string, path: string, body?: string) =>
    shop().api(method, path, {
      token: shop().config.apiKey,
      ...(body === undefined ? {} : { body, headers: { "content-type": "application/x-www-form-urlencoded" } }),
    });

  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver.close());

  it("refuses the endpoint API without the API key (401), even with an admin JWT", async () => {
    const none = await shop().api("GET", "/v1/webhook_endpoints", { token: undefined });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect((await shop().api("GET", "/v1/webhook_endpoints")).status).toBe(401);
  });

  it("lists its event types for enabled_events, each with the JSON Schema of its data, behind the API key", async () => {
    expect((await shop().api("GET", "/v1/event_types", { token: undefined })).status).toBe(401);
    const listed = await admin("GET", "/v1/event_types");
    expect(listed.status).toBe(200);
    const { data } = listed.json<{ data: { type: string; schema: Record<string, unknown> }[] }>();
    expect(data.map((type) => type.type)).toEqual(expect.arrayContaining(["order.created", "order.shipped"]));
    // A named schema (the shop's Order) is a $ref into the document's own $defs: self-contained.
    expect(data.find((type) => type.type === "order.created")?.schema).toMatchObject({
      $ref: "#/$defs/Order",
      $defs: { Order: { type: "object", properties: { user_id: { type: "string" } } } },
    });
  });

  it("registers an endpoint from a form body and shows its whsec_ secret once", async () => {
    const url = encodeURIComponent(receiver.url);
    const created = await admin(
      "POST",
      "/v1/webhook_endpoints",
      `url=${url}&enabled_events[]=user.*&enabled_events[]=order.*`,
    );
    expect(created.status).toBe(201);
    const endpoint = created.json<{ id: string; secret: string; enabled_events: string[] }>();
    expect(endpoint.secret).toMatch(/^whsec_/);
    expect(endpoint.enabled_events).toEqual(["user.*", "order.*"]);
    receiver.secret = endpoint.secret;
    endpointId = endpoint.id;
    const read = await admin("GET", `/v1/webhook_endpoints/${endpointId}`);
    expect(read.status).toBe(200);
    expect(read.json().secret).toBeUndefined();
    const list = await admin("GET", "/v1/webhook_endpoints");
    expect(list.json<{ data: { id: string }[] }>().data.map((e) => e.id)).toContain(endpointId);
    const bad = await admin("POST", "/v1/webhook_endpoints", "url=ftp%3A%2F%2Fexample.com&enabled_events[]=order.*");
    expect(bad.status).toBe(422);
  });

  it("answers every endpoint API read with ETag, Last-Modified, Cache-Control, 304 for matching validators, and HEAD", async () => {
    const reads = [
      "/v1/webhook_endpoints",
      `/v1/webhook_endpoints/${endpointId}`,
      `/v1/webhook_endpoints/${endpointId}/deliveries`,
    ];
    // Last-Modified is when these bytes were first served, sent once that second is over (settledLastModified).
    for (const path of reads) await admin("GET", path);
    shop().advanceClock(1_000);
    for (const path of reads) {
      const read = await admin("GET", path);
      expect(read.status, path).toBe(200);
      const etag = read.headers.get("etag") as string;
      const lastModified = read.headers.get("last-modified") as string;
      expect(etag, path).toMatch(/^"[^"]+"$/);
      expect(Date.parse(lastModified), path).not.toBeNaN();
      expect(read.headers.get("cache-control"), path).toBe("private, no-cache");
      const byTag = await shop().api("GET", path, {
        token: shop().config.apiKey,
        headers: { "if-none-match": etag },
      });
      expect(byTag.status, path).toBe(304);
      expect(byTag.text, path).toBe("");
      expect(byTag.headers.get("etag"), path).toBe(etag);
      expect(byTag.headers.get("cache-control"), path).toBe("private, no-cache");
      const byDate = await shop().api("GET", path, {
        token: shop().config.apiKey,
        headers: { "if-modified-since": lastModified },
      });
      expect(byDate.status, path).toBe(304);
      const head = await admin("HEAD", path);
      expect(head.status, path).toBe(200);
      expect(head.headers.get("etag"), path).toBe(etag);
      expect(head.headers.get("last-modified"), path).toBe(lastModified);
    }
    // A change makes the old tag stale: the full representation comes back with a new one.
    const item = `/v1/webhook_endpoints/${endpointId}`;
    const before = (await admin("GET", item)).headers.get("etag") as string;
    const updated = await admin("POST", item, "description=now%20described");
    expect(updated.status).toBe(200);
    const after = await shop().api("GET", item, { token: shop().config.apiKey, headers: { "if-none-match": before } });
    expect(after.status).toBe(200);
    expect(after.json().description).toBe("now described");
    expect(after.headers.get("etag")).not.toBe(before);
    // Without the API key a read is still refused, validators or not.
    const anonymous = await shop().api("GET", item, { token: undefined, headers: { "if-none-match": before } });
    expect(anonymous.status).toBe(401);
  });

  it("refuses a write of an endpoint whose If-Match its GET no longer sends: 412, nothing stored (regression: a lost update)", async () => {
    const key = shop().config.apiKey;
    const send = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
      shop().api(method, path, {
        token: key,
        ...(body === undefined ? { headers } : { body, headers: { "content-type": FORM, ...headers } }),
      });
    const created = await send(
      "POST",
      "/v1/webhook_endpoints",
      {},
      `url=${encodeURIComponent(receiver.url)}&enabled_events[]=none.*`,
    );
    const item = `/v1/webhook_endpoints/${created.json<{ id: string }>().id}`;
    // Client A reads; client B changes the endpoint: A's tag is stale.
    const stale = (await send("GET", item)).headers.get("etag") as string;
    const byB = await shop().api("PATCH", item, {
      token: key,
      body: { description: "changed by B" },
      headers: { "content-type": "application/merge-patch+json", "if-match": stale },
    });
    expect(byB.status).toBe(200);
    const byA = await shop().api("PATCH", item, {
      token: key,
      body: { description: "A overwrites B" },
      headers: { "content-type": "application/merge-patch+json", "if-match": stale },
    });
    expect(byA.status).toBe(412);
    expect(byA.json()).toMatchObject({ code: "precondition_failed", failed: "if-match" });
    expect((await send("POST", item, { "if-match": stale }, "description=A%20again")).status).toBe(412);
    expect((await send("DELETE", item, { "if-match": '"made-up"' })).status).toBe(412);
    const kept = await send("GET", item);
    expect(kept.json().description).toBe("changed by B");
    // The API's tag and the shop's caching middleware agree: B's 200 tagged what a GET now sends.
    const current = kept.headers.get("etag") as string;
    expect(byB.headers.get("etag")).toBe(current);
    expect(current).not.toBe(stale);
    expect((await send("DELETE", item, { "if-match": current })).status).toBe(200);
    expect((await send("GET", item)).status).toBe(404);
  });

  it("publishes every event type, delivered with signatures the standardwebhooks package verifies", async () => {
    const api = shop().api;
    const user = (await api("POST", "/users", { body: { name: "Hooked", tier: "basic" } })).json<{ id: string }>();
    await api("PUT", `/users/${user.id}`, { body: { name: "Hooked", tier: "gold" } });
    const merge = { "content-type": "application/merge-patch+json" };
    const placedReply = await api("POST", `/users/${user.id}/orders`, { body: { items: ITEMS } });
    const placed = placedReply.json<{ id: string }>();
    const shipped = placedReply.headers.get("location") as string;
    await api("PATCH", shipped, { body: { items: [{ sku: "HOOK", quantity: 2, unit_price: 100 }] }, headers: merge });
    await api("PATCH", shipped, { body: { status: "paid" }, headers: merge });
    await api("PATCH", shipped, { body: { status: "shipped" }, headers: merge });
    const cancelled = (await api("POST", `/users/${user.id}/orders`, { body: { items: ITEMS } })).headers.get(
      "location",
    ) as string;
    await api("PATCH", cancelled, { body: { status: "cancelled" }, headers: merge });
    expect((await api("DELETE", cancelled)).status).toBe(204);
    const expected = [
      "user.created",
      "user.updated",
      "order.created",
      "order.updated",
      "order.updated",
      "order.shipped",
      "order.created",
      "order.cancelled",
      "order.deleted",
    ];
    const mine = () =>
      receiver.received.filter((r) => r.data.id === user.id || r.data.user_id === user.id).map((r) => r.type);
    await eventually("every event", () => (mine().length >= expected.length ? true : undefined));
    expect([...mine()].sort()).toEqual([...expected].sort());
    expect(receiver.refused).toBe(0);
    // The event's data is the order as the API shows it: what the 201 answered.
    const createdEvent = receiver.received.find((r) => r.type === "order.created" && r.data.id === placed.id);
    expect(createdEvent?.data).toEqual(placed);
    const shippedEvent = receiver.received.find((r) => r.type === "order.shipped" && r.data.user_id === user.id);
    expect(shippedEvent?.data).toMatchObject({ status: "shipped", total: 200, items: [{ sku: "HOOK", quantity: 2 }] });
  });

  it("retries a failing endpoint, logs every attempt, and delivers on a manual retry", async () => {
    receiver.failing.set("user.created", 503);
    const user = (await shop().api("POST", "/users", { body: { name: "Unlucky", tier: "basic" } })).json<{
      id: string;
    }>();
    const deliveries = `/v1/webhook_endpoints/${endpointId}/deliveries`;
    const exhausted = await eventually("the delivery to be exhausted", async () => {
      const list = await admin("GET", `${deliveries}?status=exhausted`);
      return list.json<{ data: { id: string; event_type: string; attempts: number }[] }>().data[0];
    });
    expect(exhausted).toMatchObject({ event_type: "user.created", attempts: 3 });
    const log = await admin("GET", `/v1/webhook_endpoints/${endpointId}/attempts?delivery_id=${exhausted.id}`);
    const attempts = log.json<{ data: { attempt: number; status: number }[] }>().data;
    expect(attempts.map((a) => a.attempt).sort()).toEqual([1, 2, 3]);
    expect(attempts.every((a) => a.status === 503)).toBe(true);
    receiver.failing.delete("user.created");
    const retried = await admin("POST", `${deliveries}/${exhausted.id}/retry`);
    expect(retried.status).toBe(202);
    const delivered = await eventually("the retried delivery", () =>
      receiver.received.find((r) => r.type === "user.created" && r.data.id === user.id),
    );
    expect(delivered.attempt).toBe(4);
    // The consumer has its 2xx before the worker records the outcome (a write to the queue): wait for that.
    const after = await eventually("the retried delivery recorded as delivered", async () => {
      const found = (await admin("GET", `${deliveries}/${exhausted.id}`)).json<{ status: string }>();
      return found.status === "delivered" ? found : undefined;
    });
    expect(after.status).toBe("delivered");
  });

  it("deletes an endpoint: 200, then 404", async () => {
    expect((await admin("DELETE", `/v1/webhook_endpoints/${endpointId}`)).status).toBe(200);
    expect((await admin("GET", `/v1/webhook_endpoints/${endpointId}`)).status).toBe(404);
  });
}
