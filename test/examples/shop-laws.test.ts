/**
 * The HTTP laws of rest-webhooks/testing, run against the example shop's orders resource in-process.
 */
import fc from "fast-check";
import { fromHandler, type ResourceSpec, resourceLaws } from "rest-webhooks/testing";
import { afterAll, describe, it } from "vitest";
import { createShop } from "../../examples/shop/app";
import { issueToken } from "../../examples/shop/tokens";
import { testConfig } from "./shop-harness";

const config = testConfig();
const shop = await createShop(config);
const adminToken = await issueToken(config.jwtSecret, { sub: "admin", admin: true });
const created = await fromHandler(shop.handler).send(
  new Request("http://in-process.test/users", {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "Law Abiding", tier: "standard" }),
  }),
);
const userId = ((await created.json()) as { id: string }).id;
// The user's own token: the laws also prove an owner reaches its orders.
const ownerToken = await issueToken(config.jwtSecret, { sub: userId });

const item = fc.record({
  sku: fc.stringMatching(/^[A-Z0-9-]{1,8}$/),
  quantity: fc.integer({ min: 1, max: 5 }),
  unit_price: fc.integer({ min: 0, max: 10_000 }),
});
const items = fc.array(item, { minLength: 1, maxLength: 3 });

const orders: ResourceSpec = {
  collection: `/users/${userId}/orders`,
  createBody: fc.record({ items }),
  replaceBody: fc.record({ status: fc.constantFrom("pending", "paid", "cancelled"), items }),
  patchBody: fc.record({ status: fc.constantFrom("paid", "cancelled"), items }, { requiredKeys: [] }),
  headers: { authorization: `Bearer ${ownerToken}` },
  volatileFields: ["updated_at"],
  supports: { put: true, patch: true, delete: true, idempotencyKey: true },
};

afterAll(() => shop.close());

describe("the shop's orders obey every HTTP law", () => {
  for (const law of resourceLaws(fromHandler(shop.handler), orders)) {
    it(law.name, () => fc.assert(law.property, { numRuns: 15 }));
  }
});
