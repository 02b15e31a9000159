/**
 * The shop's end-to-end suite over real HTTP, one function taking a storage factory: every storage runs it.
 */

import { afterAll, beforeAll, describe } from "vitest";
import type { ShopStorage } from "../../examples/shop/storage/types";
import { type RunningShop, startShop } from "./shop-harness";
import { authCases } from "./suite/auth-cases";
import { documentCases } from "./suite/document-cases";
import { orderCases } from "./suite/order-cases";
import { orderListCases } from "./suite/order-list-cases";
import { storageCases } from "./suite/storage-cases";
import { userCases } from "./suite/user-cases";
import { webhookCases } from "./suite/webhook-cases";

/** What a storage factory returns: the storage, and how to remove what it created. */
export interface StorageUnderTest {
  storage: ShopStorage;
  /** Drops the tables (the shop's `close` already closed the storage). */
  cleanup?: () => Promise<void>;
}

/** Runs every end-to-end case against a shop on the storage `open` returns. */
export function shopSuite(open: () => Promise<StorageUnderTest>): void {
  let running: RunningShop | undefined;
  let underTest: StorageUnderTest | undefined;
  const shop = (): RunningShop => {
    if (running === undefined) throw new Error("the shop is not running");
    return running;
  };

  beforeAll(async () => {
    underTest = await open();
    // A compressed retry schedule (three attempts, 25 ms apart) keeps the webhook cases fast.
    running = await startShop(underTest.storage, { deliver: true, retryScheduleMs: [0, 25, 25] });
  });
  afterAll(async () => {
    await running?.close();
    await underTest?.cleanup?.();
  });

  describe("authentication and authorization", () => authCases(shop));
  describe("users", () => userCases(shop));
  describe("orders", () => orderCases(shop));
  describe("order lists", () => orderListCases(shop));
  describe("storage transactions", () => storageCases(shop));
  describe("webhooks", () => webhookCases(shop));
  // Last: it reads what every case above received.
  describe("the OpenAPI document", () => documentCases(shop));
}
