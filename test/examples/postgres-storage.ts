/** A fresh schema of shop storage on the test database, and its cleanup: for the suites run on PostgreSQL. */
import pg from "pg";
import { createPostgresStorage } from "../../examples/shop/storage/postgres";
import type { ShopStorage } from "../../examples/shop/storage/types";
import { databaseUrl, uniqueName } from "../support/services";

/** Opens shop storage in its own schema (`prefix_…`) over a pool of `max` connections. */
export async function openPostgresShopStorage(
  prefix: string,
  max: number,
): Promise<{ storage: ShopStorage; cleanup(): Promise<void> }> {
  const schema = uniqueName(prefix).toLowerCase();
  const pool = new pg.Pool({ connectionString: databaseUrl, max });
  const storage = await createPostgresStorage({ connection: pool, schema });
  return {
    storage,
    async cleanup() {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}
