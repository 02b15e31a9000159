/**
 * The hostile-input suite against the shop's PostgreSQL storage: on embedded PGlite always, and on the server when
 * DATABASE_URL is set. Both refuse NUL in text and lone surrogates in jsonb, which is what the suite is about.
 */
import { describe } from "vitest";
import { createPostgresStorage } from "../../examples/shop/storage/postgres";
import { openPgliteForTest } from "../support/databases";
import { skipWithoutPostgres } from "../support/services";
import { hostileInputSuite } from "./hostile-input-suite";
import { openPostgresShopStorage } from "./postgres-storage";

describe("hostile input against the example shop on PostgreSQL storage (PGlite)", () => {
  hostileInputSuite(async () => {
    const db = await openPgliteForTest();
    const storage = await createPostgresStorage({ connection: db, schema: "shop_hostile", close: () => db.close() });
    return { storage };
  });
});

describe.skipIf(skipWithoutPostgres())("hostile input against the example shop on PostgreSQL storage (server)", () => {
  hostileInputSuite(() => openPostgresShopStorage("shop_hostile", 4));
});
