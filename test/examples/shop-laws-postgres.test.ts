/**
 * The HTTP laws of rest-webhooks/testing against the example shop on PostgreSQL storage, over a real port.
 * Skipped, with the reason printed, without DATABASE_URL.
 */
import pg from "pg";
import { describe } from "vitest";
import { createPostgresStorage } from "../../examples/shop/storage/postgres";
import { databaseUrl, skipWithoutPostgres, uniqueName } from "../support/services";
import { shopLawSuite } from "./shop-laws-suite";

describe.skipIf(skipWithoutPostgres())("the shop on PostgreSQL storage", async () => {
  await shopLawSuite(async () => {
    const schema = uniqueName("shop_laws").toLowerCase();
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
    const storage = await createPostgresStorage({ connection: pool, schema });
    return {
      storage,
      async cleanup() {
        await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await pool.end();
      },
    };
  }, 10);
});
