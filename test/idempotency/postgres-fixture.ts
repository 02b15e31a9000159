// The PostgreSQL side of the multi-process tests: an idempotency table and an effects table the child
// servers insert into, both unique to the suite, created before it and dropped after it.
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { idempotencyMigrations } from "../../src/idempotency/postgres";
import { migrate } from "../../src/postgres";
import { databaseUrl } from "../support/services";

/** Registers the suite's hooks; `effects()` counts the side effects the children wrote. */
export function usePostgresEffects(name: string, onTeardown: () => Promise<void>): { effects(): Promise<number> } {
  let pool: pg.Pool;
  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    await migrate(pool, idempotencyMigrations({ schema: name }));
    await pool.query(`CREATE TABLE "${name}_effects" (id serial PRIMARY KEY)`);
  });
  afterAll(async () => {
    await onTeardown();
    await pool.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE; DROP TABLE IF EXISTS "${name}_effects"`);
    await pool.end();
  });
  return {
    effects: async () => Number((await pool.query(`SELECT count(*) AS n FROM "${name}_effects"`)).rows[0].n),
  };
}
