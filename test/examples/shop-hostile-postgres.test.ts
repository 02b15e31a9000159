import { describe } from "vitest";
import { skipWithoutPostgres } from "../support/services";
import { hostileInputSuite } from "./hostile-input-suite";
import { openPostgresShopStorage } from "./postgres-storage";

describe.skipIf(skipWithoutPostgres())("hostile input against the example shop on PostgreSQL storage", () => {
  hostileInputSuite(() => openPostgresShopStorage("shop_hostile", 4));
});
