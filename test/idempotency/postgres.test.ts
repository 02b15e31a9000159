import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idempotencyMigrations, PostgresIdempotencyStore } from "../../src/idempotency/postgres";
import { migrate, migrationSql } from "../../src/postgres";
import { databaseUrl, skipWithoutPostgres, uniqueName } from "../support/services";
import { describeStoreContract } from "./store-contract";

const schema = uniqueName("idem_pg").toLowerCase();
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const response = { status: 201, headers: { "content-type": "text/plain" }, body: new TextEncoder().encode("ok") };

describe.skipIf(skipWithoutPostgres())("PostgresIdempotencyStore", () => {
  let pool: pg.Pool;
  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: databaseUrl, max: 8 });
    await migrate(pool, idempotencyMigrations({ schema }));
  });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  describeStoreContract(
    "postgres (pool)",
    async () => ({ store: new PostgresIdempotencyStore(pool, { schema }), advance: sleep }),
    { leaseMs: 150, ttlMs: 300 },
  );

  describeStoreContract(
    "postgres (unprepared statements)",
    async () => ({ store: new PostgresIdempotencyStore(pool, { schema, prepare: false }), advance: sleep }),
    { leaseMs: 150, ttlMs: 300 },
  );

  describe("PostgreSQL specifics", () => {
    it("exports its migration as SQL, and applying it again changes nothing", async () => {
      expect(migrationSql(idempotencyMigrations())).toContain('CREATE TABLE IF NOT EXISTS "public"."idempotency_keys"');
      expect(await migrate(pool, idempotencyMigrations({ schema }))).toEqual([]);
      expect(migrationSql(idempotencyMigrations({ schema }))).toContain(`"${schema}"."idempotency_keys"`);
    });

    it("rejects a schema name that is not a plain identifier", () => {
      expect(() => new PostgresIdempotencyStore(pool, { schema: 'x"; DROP TABLE y; --' })).toThrow(TypeError);
      expect(() => idempotencyMigrations({ schema: "a.b" })).toThrow(TypeError);
    });

    it("shares the caller's transaction: rollback forgets the record, commit keeps it", async () => {
      const store = new PostgresIdempotencyStore(pool, { schema });
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
      const store = new PostgresIdempotencyStore(pool, { schema });
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
      const store = new PostgresIdempotencyStore(pool, { schema });
      await store.begin("purge-short", "fp", 50);
      await store.begin("purge-long", "fp", 60_000);
      await sleep(80);
      expect(await store.purgeExpired()).toBeGreaterThanOrEqual(1);
      const { rows } = await pool.query(`SELECT key FROM "${schema}"."idempotency_keys" WHERE key LIKE 'purge-%'`);
      expect(rows.map((r) => r.key)).toEqual(["purge-long"]);
    });
  });
});
