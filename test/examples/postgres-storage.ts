/** A fresh schema of shop storage on a PostgreSQL backend (PGlite or the server), and its cleanup. */
import { createPostgresStorage } from "../../examples/shop/storage/postgres";
import type { ShopStorage } from "../../examples/shop/storage/types";
import type { Backend } from "../support/databases";
import { uniqueName } from "../support/services";

/** Opens shop storage in its own schema (`prefix_…`) on `backend`, over up to `max` connections. */
export async function openPostgresShopStorage(
  backend: Backend,
  prefix: string,
  max: number,
): Promise<{ storage: ShopStorage; cleanup(): Promise<void> }> {
  const schema = uniqueName(prefix).toLowerCase();
  const open = await backend.open({ max });
  const storage = await createPostgresStorage({ connection: open.db, schema });
  return {
    storage,
    async cleanup() {
      await open.db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await open.close();
    },
  };
}
