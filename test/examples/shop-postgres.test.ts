import pg from "pg";
import { describe } from "vitest";
import { createPostgresStorage } from "../../examples/shop/storage/postgres";
import { databaseUrl, skipWithoutPostgres, uniqueName } from "../support/services";
import { shopSuite } from "./shop-suite";

describe.skipIf(skipWithoutPostgres())("the example shop on PostgreSQL storage", () => {
  shopSuite(async () => {
    const schema = uniqueName("shop_e2e").toLowerCase();
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 8 });
    const storage = await createPostgresStorage({ connection: pool, schema });
    return {
      storage,
      async cleanup() {
        await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await pool.end();
      },
    };
  });
});
