import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BeginResult } from "../../src/idempotency";
import { idempotencyMigrations, PostgresIdempotencyStore } from "../../src/idempotency/postgres";
import { IDEMPOTENCY_PURGE_BATCH } from "../../src/idempotency/postgres/postgres-store";
import { migrate, migrationSql, type SqlDatabase, type SqlPool, transaction } from "../../src/postgres";
import { databases, type OpenDatabase } from "../support/databases";
import { uniqueName } from "../support/services";
import { describeStoreContract } from "./store-contract";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const response = { status: 201, headers: { "content-type": "text/plain" }, body: new TextEncoder().encode("ok") };

describe.each(databases())("PostgresIdempotencyStore on $name", (backend) => {
  const schema = uniqueName("idem_pg").toLowerCase();
  let open: OpenDatabase;
  let db: SqlDatabase;
  beforeAll(async () => {
    open = await backend.open({ max: 8 });
    db = open.db;
    await migrate(db, idempotencyMigrations({ schema }));
  });
  afterAll(async () => {
    await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await open.close();
  });

  describeStoreContract(
    "shared client",
    async () => ({ store: new PostgresIdempotencyStore(db, { schema }), advance: sleep }),
    { leaseMs: 150, ttlMs: 300 },
  );

  describeStoreContract(
    "unprepared statements",
    async () => ({ store: new PostgresIdempotencyStore(db, { schema, prepare: false }), advance: sleep }),
    { leaseMs: 150, ttlMs: 300 },
  );

  describe("PostgreSQL specifics", () => {
    it("exports its migration as SQL, and applying it again changes nothing", async () => {
      expect(migrationSql(idempotencyMigrations())).toContain('CREATE TABLE IF NOT EXISTS "public"."idempotency_keys"');
      expect(await migrate(db, idempotencyMigrations({ schema }))).toEqual([]);
      expect(migrationSql(idempotencyMigrations({ schema }))).toContain(`"${schema}"."idempotency_keys"`);
    });

    it("rejects a schema name that is not a plain identifier", () => {
      expect(() => new PostgresIdempotencyStore(db, { schema: 'x"; DROP TABLE y; --' })).toThrow(TypeError);
      expect(() => idempotencyMigrations({ schema: "a.b" })).toThrow(TypeError);
    });

    it("shares the caller's transaction: rollback forgets the record, commit keeps it", async () => {
      const store = new PostgresIdempotencyStore(db, { schema });
      await expect(
        transaction(db, async (tx) => {
          const first = await store.withClient(tx).begin("tx-rollback", "fp", 5000);
          if (first.kind !== "acquired") throw new Error(first.kind);
          await store.withClient(tx).complete("tx-rollback", first.leaseToken, response, 60_000);
          throw new Error("roll back");
        }),
      ).rejects.toThrow("roll back");
      expect((await store.begin("tx-rollback", "fp", 5000)).kind).toBe("acquired");
      await transaction(db, async (tx) => {
        const second = await store.withClient(tx).begin("tx-commit", "fp", 5000);
        if (second.kind !== "acquired") throw new Error(second.kind);
        await store.withClient(tx).complete("tx-commit", second.leaseToken, response, 60_000);
      });
      expect((await store.begin("tx-commit", "fp", 5000)).kind).toBe("completed");
    });

    it("makes a concurrent begin wait for the open transaction, then see its outcome", async () => {
      const store = new PostgresIdempotencyStore(db, { schema });
      let waiting: Promise<{ kind: string }> | undefined;
      await transaction(db, async (tx) => {
        const first = await store.withClient(tx).begin("tx-wait", "fp", 5000);
        if (first.kind !== "acquired") throw new Error(first.kind);
        // Another connection (PGlite: its next query) waits for this transaction to end.
        waiting = store.begin("tx-wait", "fp", 5000);
        await store.withClient(tx).complete("tx-wait", first.leaseToken, response, 60_000);
      });
      expect((await waiting)?.kind).toBe("completed");
    });

    // Regression: a lease that ran out inside the transaction that took it was refused, so the transaction committed
    // the handler's effect beside a record still in progress, and the retry waiting on that row ran the handler again.
    it("completes or releases a lease run out in the transaction that took it: none can take it over", async () => {
      const store = new PostgresIdempotencyStore(db, { schema });
      let waiting: Promise<BeginResult> | undefined;
      await transaction(db, async (tx) => {
        const own = store.withClient(tx);
        const completed = await own.begin("tx-outlived-complete", "fp", 1);
        const released = await own.begin("tx-outlived-release", "fp", 1);
        if (completed.kind !== "acquired" || released.kind !== "acquired") throw new Error("not acquired");
        await tx.query("SELECT pg_sleep(0.005)"); // the database's clock passes both leases' end
        // Another connection (PGlite: its next query) waits for this transaction to end.
        waiting = store.begin("tx-outlived-complete", "fp", 5000);
        expect(await own.complete("tx-outlived-complete", completed.leaseToken, response, 60_000)).toBe(true);
        expect(await own.release("tx-outlived-release", released.leaseToken)).toBe(true);
      });
      expect((await waiting)?.kind).toBe("completed");
      expect((await store.begin("tx-outlived-release", "fp", 5000)).kind).toBe("acquired");
    });

    it("still refuses a lease that ran out after the transaction that took it committed", async () => {
      const store = new PostgresIdempotencyStore(db, { schema });
      const token = await transaction(db, async (tx) => {
        const found = await store.withClient(tx).begin("tx-committed-lease", "fp", 50);
        if (found.kind !== "acquired") throw new Error(found.kind);
        return found.leaseToken;
      });
      await sleep(80);
      await transaction(db, async (tx) => {
        expect(await store.withClient(tx).complete("tx-committed-lease", token, response, 60_000)).toBe(false);
        expect(await store.withClient(tx).release("tx-committed-lease", token)).toBe(false);
      });
    });

    it("refuses a bad leaseMs or ttlMs before sending any statement", async () => {
      const sent: string[] = [];
      const client = {
        query: async (text: string) => {
          sent.push(text);
          return { rows: [], rowCount: 0 };
        },
      };
      const store = new PostgresIdempotencyStore(client, { schema });
      await expect(store.begin("k", "fp", -5)).rejects.toThrow(TypeError);
      await expect(store.complete("k", "token", response, Number.NaN)).rejects.toThrow(TypeError);
      expect(sent).toEqual([]);
    });

    it("purgeExpired deletes expired rows only", async () => {
      const store = new PostgresIdempotencyStore(db, { schema });
      await store.begin("purge-short", "fp", 50);
      await store.begin("purge-long", "fp", 60_000);
      await sleep(80);
      expect(await store.purgeExpired()).toBeGreaterThanOrEqual(1);
      const { rows } = await db.query(`SELECT key FROM "${schema}"."idempotency_keys" WHERE key LIKE 'purge-%'`);
      expect(rows.map((r) => (r as { key: string }).key)).toEqual(["purge-long"]);
    });

    it("purgeExpired deletes a backlog larger than one batch in several bounded statements, counting them all", async () => {
      // A schema of its own: the contract's records expire as this test runs.
      const own = `${schema}_purge`;
      await db.query(`DROP SCHEMA IF EXISTS "${own}" CASCADE`);
      await migrate(db, idempotencyMigrations({ schema: own }));
      const t = `"${own}"."idempotency_keys"`;
      const expired = IDEMPOTENCY_PURGE_BATCH * 2 + 5;
      await db.query(
        `INSERT INTO ${t} (key, fingerprint, status, expires_at)
         SELECT 'backlog-' || n, 'fp', 200, clock_timestamp() - interval '1 hour' FROM generate_series(1, ${expired}) AS n`,
      );
      await db.query(
        `INSERT INTO ${t} (key, fingerprint, expires_at) VALUES ('backlog-live', 'fp', clock_timestamp() + interval '1 hour')`,
      );
      const deletes: string[] = [];
      const spy = {
        query: (text: string, values?: unknown[]) => {
          if (text.startsWith("DELETE")) deletes.push(text);
          return db.query(text, values);
        },
      } as SqlDatabase;
      const store = new PostgresIdempotencyStore(spy, { schema: own, prepare: false });
      expect(await store.purgeExpired()).toBe(expired);
      // Each statement deletes at most one batch: three here, the last one short.
      expect(deletes).toHaveLength(3);
      const { rows } = await db.query(`SELECT key FROM ${t} WHERE key LIKE 'backlog-%'`);
      expect(rows.map((r) => (r as { key: string }).key)).toEqual(["backlog-live"]);
      await db.query(`DROP SCHEMA "${own}" CASCADE`);
    });

    // Regression: two purgers took the same rows, and the one that lost them to the other stopped short of a batch;
    // a purge also waited on a row a `begin` was taking over. Each purge now takes rows no other holds.
    if (backend.concurrent)
      it("purgeExpired passes over expired rows another transaction holds, without waiting for them", async () => {
        const own = `${schema}_held`;
        await db.query(`DROP SCHEMA IF EXISTS "${own}" CASCADE`);
        await migrate(db, idempotencyMigrations({ schema: own }));
        const t = `"${own}"."idempotency_keys"`;
        await db.query(
          `INSERT INTO ${t} (key, fingerprint, status, expires_at)
           SELECT 'held-' || n, 'fp', 200, clock_timestamp() - interval '1 hour' FROM generate_series(1, 50) AS n`,
        );
        const store = new PostgresIdempotencyStore(db, { schema: own });
        const other = await (db as SqlPool).connect();
        try {
          await other.query("BEGIN");
          await other.query(`SELECT key FROM ${t} WHERE key IN ('held-1', 'held-2') FOR UPDATE`);
          expect(await store.purgeExpired()).toBe(48);
          await other.query("COMMIT");
        } finally {
          other.release();
        }
        expect(await store.purgeExpired()).toBe(2);
        await db.query(`DROP SCHEMA "${own}" CASCADE`);
      });
  });
});
