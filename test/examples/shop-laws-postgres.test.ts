/**
 * The HTTP laws of rest-webhooks/testing against the example shop on PostgreSQL storage, over a real port.
 * Skipped, with the reason printed, without DATABASE_URL.
 */
import { describe } from "vitest";
import { skipWithoutPostgres } from "../support/services";
import { openPostgresShopStorage } from "./postgres-storage";
import { shopLawSuite } from "./shop-laws-suite";

// vitest still runs a skipped describe's body to collect its tests: the connection is opened only when it runs.
const skip = skipWithoutPostgres();
describe.skipIf(skip)("the shop on PostgreSQL storage", async () => {
  if (!skip) await shopLawSuite(() => openPostgresShopStorage("shop_laws", 4), 10);
});
