/**
 * The HTTP laws of rest-webhooks/testing against the example shop on PostgreSQL storage, over a real port: on
 * embedded PGlite always, and on the server when DATABASE_URL is set.
 */
import { describe } from "vitest";
import { databases } from "../support/databases";
import { openPostgresShopStorage } from "./postgres-storage";
import { shopLawSuite } from "./shop-laws-suite";

describe.each(databases())("the shop on PostgreSQL storage ($name)", async (backend) => {
  await shopLawSuite(() => openPostgresShopStorage(backend, "shop_laws", 4), 10);
});
