import { HttpProblem, type HttpRequest } from "rest-webhooks/http";
import { idempotency } from "rest-webhooks/idempotency";
import { createEvent } from "rest-webhooks/webhooks/delivery";
import { expect, it } from "vitest";
import type { RunningShop } from "../shop-harness";

/** An order change and its event commit together, or neither does. */
export function storageCases(shop: () => RunningShop): void {
  it("rolls back the order and its event when the transaction fails", async () => {
    const { storage } = shop().shop;
    const created = await shop().api("POST", "/users", { body: { name: "Rollback", tier: "basic" } });
    const userId = created.json<{ id: string }>().id;
    const endpoint = await shop().api("POST", "/v1/webhook_endpoints", {
      token: shop().config.apiKey,
      body: { url: "http://127.0.0.1:9/never", enabled_events: ["order.created"] },
    });
    expect(endpoint.status).toBe(201);
    const endpointId = endpoint.json<{ id: string }>().id;
    const event = createEvent({ type: "order.created", data: { id: "ord_rolled_back" } });
    const failure = storage.transaction(async (tx) => {
      await tx.placeOrder({
        id: "ord_rolled_back",
        userId,
        status: "pending",
        items: [{ sku: "A", quantity: 1, unit_price: 1 }],
        total: 1,
        version: 1,
        createdAt: Date.now(),
        updatedAt: Date.now(),
      });
      await tx.publish(event);
      throw new Error("the business rule said no");
    });
    await expect(failure).rejects.toThrow("the business rule said no");
    expect(await storage.getOrder(userId, "ord_rolled_back")).toBeUndefined();
    expect((await storage.queue.list(endpointId)).filter((d) => d.eventId === event.id)).toEqual([]);
    await shop().api("DELETE", `/v1/webhook_endpoints/${endpointId}`, { token: shop().config.apiKey });
  });

  it("rolls back a request's write whose work throws a 4xx problem (regression: committed on PostgreSQL under an Idempotency-Key)", async () => {
    const { storage } = shop().shop;
    const now = Date.now();
    const user = { id: `usr_thrown_${now}`, name: "Thrown", tier: "basic", version: 1, createdAt: now, updatedAt: now };
    // The shop's own wiring (app.ts): the request's transaction outside the idempotency record, the write inside.
    const handler = storage.requestScope(() => {})(
      idempotency({ store: (request) => storage.idempotency(request), identify: () => "caller" })((request) =>
        storage.transaction(async (tx) => {
          await tx.putUser({ ...user, ordersChangedAt: now });
          throw new HttpProblem({ status: 409, code: "conflict", detail: "The business rule said no." });
        }, request),
      ),
    );
    const request = (key: string): HttpRequest => ({
      method: "POST",
      path: "/users",
      search: "",
      query: {},
      headers: { "idempotency-key": `"${key}"`, "content-type": "application/json" },
      body: new TextEncoder().encode("{}"),
    });
    const keyed = await handler(request(`thrown-${now}`));
    expect(keyed.status).toBe(409);
    expect(await storage.getUser(user.id)).toBeUndefined();
    // The refusal is the key's recorded outcome: the retry replays it, and still writes nothing.
    const replayed = await handler(request(`thrown-${now}`));
    expect(replayed.status).toBe(409);
    expect(replayed.headers["idempotent-replayed"]).toBe("true");
    expect(await storage.getUser(user.id)).toBeUndefined();
    // Without a key the problem is thrown through the request's transaction, and rolls it back too.
    const plain = storage.requestScope(() => {})((request) =>
      storage.transaction(async (tx) => {
        await tx.putUser({ ...user, ordersChangedAt: now });
        throw new HttpProblem({ status: 412, code: "precondition_failed", detail: "Stale." });
      }, request),
    );
    await expect(plain({ ...request("unused"), headers: {} })).rejects.toBeInstanceOf(HttpProblem);
    expect(await storage.getUser(user.id)).toBeUndefined();
  });
}
