import { describe } from "vitest";
import { databases } from "../support/databases";
import { openPostgresShopStorage } from "./postgres-storage";
import { shopSuite } from "./shop-suite";

describe.each(databases())("the example shop on PostgreSQL storage ($name)", (backend) => {
  shopSuite(() => openPostgresShopStorage(backend, "shop_e2e", 8));
});
