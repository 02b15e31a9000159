/**
 * The HTTP laws of rest-webhooks/testing against the example shop on memory storage: over a real port
 * (`fromBaseUrl`) for users and orders, and in-process (`fromHandler`) for orders.
 */
import fc from "fast-check";
import { fromHandler, resourceLaws } from "rest-webhooks/testing";
import { describe, it } from "vitest";
import { createMemoryStorage } from "../../examples/shop/storage/memory";
import { ordersSpec, shopLawSuite } from "./shop-laws-suite";

describe("the shop on memory storage", async () => {
  const running = await shopLawSuite(async () => ({ storage: createMemoryStorage() }));

  describe("a user's orders obey every HTTP law, in-process through the Fetch adapter", async () => {
    const created = await running.api("POST", "/users", { body: { name: "In Process", tier: "basic" } });
    const userId = created.json<{ id: string }>().id;
    const orders = ordersSpec(userId, await running.tokenFor(userId));
    for (const law of resourceLaws(fromHandler(running.shop.handler), orders)) {
      it(law.name, () => fc.assert(law.property, { numRuns: 15 }));
    }
  });
});
