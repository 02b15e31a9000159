/**
 * The HTTP laws of rest-webhooks/testing run against the example shop listening on a real port (`fromBaseUrl`),
 * for its users and a user's orders, on any storage: one function taking a storage factory.
 */
import fc from "fast-check";
import { fromBaseUrl, fromZod, type ResourceSpec, resourceLaws } from "rest-webhooks/testing";
import { afterAll, describe, it } from "vitest";
import { OrderCreate, UserInput } from "../../examples/shop/schemas";
import type { ShopStorage, ShopTransaction } from "../../examples/shop/storage/types";
import { type RunningShop, startShop } from "./shop-harness";
import type { StorageUnderTest } from "./shop-suite";

/** The storage, with a count of the distinct users ever written: the users law's `count()` hook. */
export function countingUsers(storage: ShopStorage): { storage: ShopStorage; count: () => number } {
  const ids = new Set<string>();
  const bound = <T extends object>(target: T, name: string | symbol) => {
    const value = Reflect.get(target, name);
    return typeof value === "function" ? value.bind(target) : value;
  };
  const counting = (tx: ShopTransaction): ShopTransaction =>
    new Proxy(tx, {
      get: (target, name) =>
        name === "putUser"
          ? (user: Parameters<ShopTransaction["putUser"]>[0]) => {
              ids.add(user.id);
              return target.putUser(user);
            }
          : bound(target, name),
    });
  const wrapped = new Proxy(storage, {
    get: (target, name) =>
      name === "transaction"
        ? // Every argument passed on: the request's own transaction is joined, never a second one beside it (which,
          // on PGlite's one connection, would wait for the first forever).
          <T>(work: (tx: ShopTransaction) => Promise<T>, ...rest: unknown[]) =>
            (target.transaction as (w: typeof work, ...r: unknown[]) => Promise<T>)((tx) => work(counting(tx)), ...rest)
        : bound(target, name),
  });
  return { storage: wrapped, count: () => ids.size };
}

const item = fc.record({
  sku: fc.stringMatching(/^[A-Z0-9-]{1,8}$/),
  quantity: fc.integer({ min: 1, max: 5 }),
  unit_price: fc.integer({ min: 0, max: 10_000 }),
});
const items = fc.array(item, { minLength: 1, maxLength: 3 });

/**
 * The orders of one user, as the laws see them (the owner's token): the changes a customer may make to a new
 * order, keeping it pending or cancelling it (paying takes the admin scope: 403).
 */
export function ordersSpec(userId: string, ownerToken: string): ResourceSpec {
  return {
    collection: `/users/${userId}/orders`,
    // The shop's own schema: its JSON Schema has $refs into $defs (OrderItem).
    createBody: fromZod(OrderCreate),
    replaceBody: fc.record({ status: fc.constantFrom("pending", "cancelled"), items }),
    patchBody: fc.record({ status: fc.constantFrom("pending", "cancelled"), items }, { requiredKeys: [] }),
    headers: { authorization: `Bearer ${ownerToken}` },
    volatileFields: ["updated_at"],
    // No count(): the law lists the collection, following its Link rel="next" pages.
    supports: { put: true, patch: true, delete: true, idempotencyKey: true },
  };
}

/** The users, as an admin sees them: create and replace, no PATCH or DELETE, no list (hence `count`). */
export function usersSpec(adminToken: string, count: () => number): ResourceSpec {
  return {
    collection: "/users",
    createBody: fromZod(UserInput),
    headers: { authorization: `Bearer ${adminToken}` },
    count,
    supports: { list: false, put: true, patch: false, delete: false, idempotencyKey: true },
  };
}

/**
 * Runs every law on the shop's orders and users, over HTTP on 127.0.0.1 (`fromBaseUrl`), on the storage `open`
 * returns. Awaited at the top of a test file: the laws are built from the running shop's user and tokens.
 */
export async function shopLawSuite(open: () => Promise<StorageUnderTest>, numRuns = 15): Promise<RunningShop> {
  const underTest = await open();
  const users = countingUsers(underTest.storage);
  const running = await startShop(users.storage);
  afterAll(async () => {
    await running.close();
    await underTest.cleanup?.();
  });
  const created = await running.api("POST", "/users", { body: { name: "Law Abiding", tier: "standard" } });
  const userId = created.json<{ id: string }>().id;
  // The user's own token: the laws also prove an owner reaches its orders.
  const orders = ordersSpec(userId, await running.tokenFor(userId));
  const target = fromBaseUrl(running.server.url);

  describe("a user's orders obey every HTTP law, over a real port", () => {
    for (const law of resourceLaws(target, orders)) {
      it(law.name, () => fc.assert(law.property, { numRuns }));
    }
  });
  describe("users obey every HTTP law that applies (no list, PATCH or DELETE), over a real port", () => {
    for (const law of resourceLaws(target, usersSpec(running.adminToken, users.count))) {
      it(law.name, () => fc.assert(law.property, { numRuns }));
    }
  });
  return running;
}
