import { describe } from "vitest";
import { skipWithoutPostgres } from "../support/services";
import { openPostgresShopStorage } from "./postgres-storage";
import { shopSuite } from "./shop-suite";

describe.skipIf(skipWithoutPostgres())("the example shop on PostgreSQL storage", () => {
  shopSuite(() => openPostgresShopStorage("shop_e2e", 8));
});
