import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  IDEMPOTENCY_MIGRATION_SQL,
  migrate,
  migrationSql,
  PostgresIdempotencyStore,
} from "../../src/idempotency/postgres";
import { databaseUrl, skipWithoutPostgres, uniqueName } from "../support/services";
import { describeStoreContract } from "./store-contract";

const table = uniqueName("idem_pg");
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const response = { status: 201, headers: { "content-type": "text/plain" }, body: new TextEncoder().encode("ok") };

describe.skipIf(skipWithoutPostgres())("PostgresIdempotencyStore", () => {
  let pool: pg.Pool;
  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: databaseUrl, max: 8 });
    await migrate(pool, { table });
  });
  afterAll(async () => {
    await pool.query(`DROP TABLE IF EXISTS "${table}"`);
    await pool.end();
  });

  describeStoreContract(
    "postgres (pool)",
    async () => ({ store: new PostgresIdempotencyStore(pool, { table }), advance: sleep }),
    { leaseMs: 150, ttlMs: 300 },
  );

  describeStoreContract(
    "postgres (unprepared statements)",
    async () => ({ store: new PostgresIdempotencyStore(pool, { table, prepare: false }), advance: sleep }),
    { leaseMs: 150, ttlMs: 300 },
  );

  describe("PostgreSQL specifics", () => {
    it("exports the migration for the default table and is idempotent to run", async () => {
      expect(IDEMPOTENCY_MIGRATION_SQL).toContain('CREATE TABLE IF NOT EXISTS "idempotency_keys"');
      await migrate(pool, { table });
      expect(migrationSql(table)).toContain(`"${table}"`);
    });

    it("rejects a table name that is not a plain identifier", () => {
      expect(() => new PostgresIdempotencyStore(pool, { table: 'x"; DROP TABLE y; --' })).toThrow(TypeError);
      expect(() => migrationSql("a.b.c")).toThrow(TypeError);
    });

    it("shares the caller's transaction: rollback forgets the record, commit keeps it", async () => {
      const store = new PostgresIdempotencyStore(pool, { table });
      const client = await pool.connect();
      try {
        const tx = store.withClient(client);
        await client.query("BEGIN");
        const first = await tx.begin("tx-rollback", "fp", 5000);
        if (first.kind !== "acquired") throw new Error(first.kind);
        await tx.complete("tx-rollback", first.leaseToken, response, 60_000);
        await client.query("ROLLBACK");
        expect((await store.begin("tx-rollback", "fp", 5000)).kind).toBe("acquired");

        await client.query("BEGIN");
        const second = await tx.begin("tx-commit", "fp", 5000);
        if (second.kind !== "acquired") throw new Error(second.kind);
        await tx.complete("tx-commit", second.leaseToken, response, 60_000);
        await client.query("COMMIT");
        expect((await store.begin("tx-commit", "fp", 5000)).kind).toBe("completed");
      } finally {
        client.release();
      }
    });

    it("makes a concurrent begin wait for the open transaction, then see its outcome", async () => {
      const store = new PostgresIdempotencyStore(pool, { table });
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const tx = store.withClient(client);
        const first = await tx.begin("tx-wait", "fp", 5000);
        if (first.kind !== "acquired") throw new Error(first.kind);
        const waiting = store.begin("tx-wait", "fp", 5000);
        await tx.complete("tx-wait", first.leaseToken, response, 60_000);
        await client.query("COMMIT");
        expect((await waiting).kind).toBe("completed");
      } finally {
        client.release();
      }
    });

    it("purgeExpired deletes expired rows only", async () => {
      const store = new PostgresIdempotencyStore(pool, { table });
      await store.begin("purge-short", "fp", 50);
      await store.begin("purge-long", "fp", 60_000);
      await sleep(80);
      expect(await store.purgeExpired()).toBeGreaterThanOrEqual(1);
      const { rows } = await pool.query(`SELECT key FROM "${table}" WHERE key LIKE 'purge-%'`);
      expect(rows.map((r) => r.key)).toEqual(["purge-long"]);
    });
  });
});
