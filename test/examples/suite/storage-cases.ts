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
}
