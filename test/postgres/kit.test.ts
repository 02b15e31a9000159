/**
 * The PostgreSQL kit on every client it accepts: a pg Pool, a pg Client, and PGlite (embedded). One contract:
 * transaction() commits or rolls back as one, migrate() applies each migration once and can race itself.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schemaName } from "../../src/postgres/identifier";
import {
  type Migration,
  MigrationError,
  migrate,
  migrationSql,
  type SqlClient,
  type SqlDatabase,
  type SqlTransactor,
  transaction,
} from "../../src/postgres/index";
import { onServer, openPgliteForTest } from "../support/databases";
import { databaseUrl, uniqueName } from "../support/services";

interface Kit {
  db: SqlDatabase;
  close(): Promise<void>;
}

function migrations(schema: string): Migration[] {
  return [
    { id: "t@1", schema, statements: [`CREATE TABLE "${schema}".t (id int PRIMARY KEY)`] },
    {
      id: "t@2",
      schema,
      statements: [`ALTER TABLE "${schema}".t ADD COLUMN note text`, `CREATE INDEX ON "${schema}".t (note)`],
    },
  ];
}

const count = async (db: SqlDatabase, schema: string) =>
  Number(((await db.query(`SELECT count(*)::int AS n FROM "${schema}".t`)).rows[0] as { n: number }).n);

function kitContract(name: string, open: () => Promise<Kit>, concurrent: boolean): void {
  describe(name, () => {
    let kit: Kit;
    const schema = uniqueName("kit").toLowerCase();
    beforeAll(async () => {
      kit = await open();
    });
    afterAll(async () => {
      await kit.db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await kit.close();
    });

    it("migrate applies each migration once, in order, and records it", async () => {
      expect(await migrate(kit.db, migrations(schema))).toEqual([`${schema}:t@1`, `${schema}:t@2`]);
      expect(await migrate(kit.db, migrations(schema))).toEqual([]);
      const { rows } = await kit.db.query(`SELECT id FROM "${schema}".rest_webhooks_migrations ORDER BY id`);
      expect(rows).toEqual([{ id: "t@1" }, { id: "t@2" }]);
    });

    it("names the migration, its schema and the statement that failed, with the database's error as cause", async () => {
      const broken: Migration[] = [
        {
          id: "t@3",
          schema,
          statements: [`CREATE INDEX ON "${schema}".t (id)`, `ALTER TABLE "${schema}".t ADD COLUMN extra no_such_type`],
        },
      ];
      const failure = await migrate(kit.db, broken).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(MigrationError);
      expect(failure).toMatchObject({ code: "migration_failed", migration: "t@3", schema, statement: 2 });
      expect((failure as Error).message).toMatch(
        new RegExp(`^Migration "t@3" in schema "${schema}" failed at statement 2: `),
      );
      expect((failure as Error).cause).toMatchObject({ code: "42704" }); // type "no_such_type" does not exist
      const { rows } = await kit.db.query(`SELECT id FROM "${schema}".rest_webhooks_migrations ORDER BY id`);
      expect(rows).toEqual([{ id: "t@1" }, { id: "t@2" }]);
    });

    // Regression: a failure while preparing a schema (creating it, creating or reading its migration table) came out
    // as the driver's bare error, naming no step and no schema.
    describe("a schema's setup that fails names its step and schema", () => {
      it("creating the schema: migration_schema_failed (here a read-only transaction, as on a standby)", async () => {
        const fresh = uniqueName("kitro").toLowerCase();
        const failure = await transaction(kit.db, async (tx) => {
          await tx.query("SET LOCAL transaction_read_only = on");
          return migrate(tx, migrations(fresh));
        }).catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(MigrationError);
        expect(failure).toMatchObject({ code: "migration_schema_failed", schema: fresh, migration: undefined });
        expect((failure as Error).cause).toMatchObject({ code: "25006" }); // read_only_sql_transaction
        const { rows } = await kit.db.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [fresh]);
        expect(rows).toEqual([]);
      });

      it("creating or reading its migration table: migration_history_failed (a table of that name not ours)", async () => {
        const taken = uniqueName("kittaken").toLowerCase();
        try {
          await kit.db.query(`CREATE SCHEMA "${taken}"`);
          await kit.db.query(`CREATE TABLE "${taken}".rest_webhooks_migrations (version int)`);
          const failure = await migrate(kit.db, migrations(taken)).catch((error: unknown) => error);
          expect(failure).toBeInstanceOf(MigrationError);
          expect(failure).toMatchObject({ code: "migration_history_failed", schema: taken, statement: undefined });
          expect((failure as Error).cause).toMatchObject({ code: "42703" }); // column "id" does not exist
          const { rows } = await kit.db.query("SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 't'", [
            taken,
          ]);
          expect(rows).toEqual([]);
        } finally {
          await kit.db.query(`DROP SCHEMA IF EXISTS "${taken}" CASCADE`);
        }
      });
    });

    // Regression: an older release started on a schema a newer one had migrated went on as if its own migrations
    // were all there were, its code then running on tables it does not know.
    describe("a schema recording migrations this code does not know (a newer release's)", () => {
      const newer = (name: string): Migration[] => [
        ...migrations(name),
        { id: "t@3", schema: name, statements: [`ALTER TABLE "${name}".t ADD COLUMN later text`] },
      ];
      const other = (name: string): Migration[] => [
        { id: "other@1", schema: name, statements: [`CREATE TABLE "${name}".o (id int)`] },
      ];

      it("refuses with migration_unknown_applied naming them, applying nothing; allowUnknown goes on", async () => {
        const name = uniqueName("kitnew").toLowerCase();
        try {
          await migrate(kit.db, newer(name));
          // The older release knows t@1 and t@2 only, and brings a store the schema does not have yet.
          const older = [...migrations(name), ...other(name)];
          const failure = await migrate(kit.db, older).catch((error: unknown) => error);
          expect(failure).toBeInstanceOf(MigrationError);
          expect(failure).toMatchObject({ code: "migration_unknown_applied", schema: name, unknown: ["t@3"] });
          expect((failure as Error).message).toContain('"t@3"');
          const tables = async () =>
            (
              await kit.db.query("SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename", [name])
            ).rows.map((row) => (row as { tablename: string }).tablename);
          expect(await tables()).toEqual(["rest_webhooks_migrations", "t"]);
          expect(await migrate(kit.db, older, { allowUnknown: true })).toEqual([`${name}:other@1`]);
          expect(await tables()).toEqual(["o", "rest_webhooks_migrations", "t"]);
        } finally {
          await kit.db.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
        }
      });

      it("counts neither another store's migrations nor an older one missing from the list as unknown", async () => {
        const name = uniqueName("kitshare").toLowerCase();
        try {
          await migrate(kit.db, other(name));
          expect(await migrate(kit.db, migrations(name))).toEqual([`${name}:t@1`, `${name}:t@2`]);
          expect(await migrate(kit.db, other(name))).toEqual([]);
          // A list given from t@2 on (t@1 squashed into it, say) knows the store up to t@2: nothing newer recorded.
          expect(await migrate(kit.db, migrations(name).slice(1))).toEqual([]);
        } finally {
          await kit.db.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
        }
      });
    });

    // Regression: migrate() wrote a migration's schema between double quotes as given, so a quote in it ended the
    // identifier and the rest ran as SQL, and a name over 63 bytes was cut short by PostgreSQL, so two long names
    // sharing their first 63 bytes were one schema (the second's migrations were found applied already).
    describe("a migration's schema, as PostgreSQL reads a quoted identifier", () => {
      const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;
      const inSchema = (name: string): Migration[] => [
        { id: "odd@1", schema: name, statements: [`CREATE TABLE ${quoted(name)}.t (id int)`] },
      ];
      const schemas = async (prefix: string) =>
        (await kit.db.query("SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)", [prefix])).rows.map(
          (row) => (row as { nspname: string }).nspname,
        );

      it("keeps quotes, dots, spaces and upper case as they are", async () => {
        const prefix = uniqueName("Kit");
        const odd = `${prefix}."Odd"; DROP x --`;
        try {
          expect(await migrate(kit.db, inSchema(odd))).toEqual([`${odd}:odd@1`]);
          expect(await migrate(kit.db, inSchema(odd))).toEqual([]);
          expect(await schemas(prefix)).toEqual([odd]);
          expect(await count(kit.db, odd.replaceAll('"', '""'))).toBe(0);
        } finally {
          await kit.db.query(`DROP SCHEMA IF EXISTS ${quoted(odd)} CASCADE`);
        }
      });

      it("refuses, before any statement, a name PostgreSQL would not keep: over 63 bytes, empty, with a NUL", async () => {
        const prefix = uniqueName("kitlong");
        try {
          for (const name of [prefix.padEnd(64, "x"), `${prefix}${"é".repeat(20)}`, "", `${prefix}\u0000`]) {
            await expect(migrate(kit.db, inSchema(name)), JSON.stringify(name)).rejects.toThrow(TypeError);
            expect(() => migrationSql(inSchema(name))).toThrow(TypeError);
          }
          expect(await schemas(prefix)).toEqual([]);
        } finally {
          for (const name of await schemas(prefix)) await kit.db.query(`DROP SCHEMA ${quoted(name)} CASCADE`);
        }
      });
    });

    it("transaction commits what work did, and returns its value", async () => {
      const value = await transaction(kit.db, async (tx) => {
        await tx.query(`INSERT INTO "${schema}".t (id) VALUES ($1), ($2)`, [1, 2]);
        return "done";
      });
      expect(value).toBe("done");
      expect(await count(kit.db, schema)).toBe(2);
    });

    it("transaction rolls back every write when work throws, and rethrows", async () => {
      const failure = new Error("business rule");
      await expect(
        transaction(kit.db, async (tx) => {
          await tx.query(`INSERT INTO "${schema}".t (id) VALUES (3)`);
          throw failure;
        }),
      ).rejects.toBe(failure);
      await expect(
        transaction(kit.db, async (tx) => {
          await tx.query(`INSERT INTO "${schema}".t (id) VALUES (4)`);
          await tx.query(`INSERT INTO "${schema}".t (id) VALUES (1)`); // a unique violation
        }),
      ).rejects.toMatchObject({ code: "23505" });
      expect(await count(kit.db, schema)).toBe(2);
      // The connection is usable afterwards: nothing is left open.
      await transaction(kit.db, (tx) => tx.query(`INSERT INTO "${schema}".t (id) VALUES (5)`));
      expect(await count(kit.db, schema)).toBe(3);
    });

    // Regression: PostgreSQL answers the COMMIT of a transaction a failed statement aborted with the tag ROLLBACK, not
    // an error; on pg, work that caught the statement's error got transaction()'s success though nothing committed.
    it("rejects (25P02) when work caught a failed statement's error: COMMIT rolled the transaction back", async () => {
      const before = await count(kit.db, schema);
      const outcome = await transaction(kit.db, async (tx) => {
        await tx.query(`INSERT INTO "${schema}".t (id) VALUES (6)`);
        await tx.query("SELECT 1 / 0").catch(() => undefined); // the transaction is aborted, work goes on
        return "done";
      }).catch((error: unknown) => error);
      expect(outcome).toMatchObject({ code: "25P02" });
      expect(await count(kit.db, schema)).toBe(before);
      // Nothing is left open: the next transaction commits.
      await transaction(kit.db, (tx) => tx.query(`INSERT INTO "${schema}".t (id) VALUES (6)`));
      await kit.db.query(`DELETE FROM "${schema}".t WHERE id = 6`);
      expect(await count(kit.db, schema)).toBe(before);
    });

    it("runs the migrations' SQL script on a database without the schema", async () => {
      const fresh = uniqueName("kitsql").toLowerCase();
      const script = migrationSql(migrations(fresh));
      try {
        // PGlite's query takes one statement (extended protocol); its exec takes a script.
        const runner = kit.db as SqlDatabase & { exec?: (sql: string) => Promise<unknown> };
        await (runner.exec ? runner.exec(script) : kit.db.query(script));
        expect(await count(kit.db, fresh)).toBe(0);
      } finally {
        await kit.db.query(`DROP SCHEMA IF EXISTS "${fresh}" CASCADE`);
      }
    });

    describe("a transaction passed again nests in a savepoint", () => {
      const ids = async () =>
        ((await kit.db.query(`SELECT id FROM "${schema}".t WHERE id >= 100 ORDER BY id`)).rows as { id: number }[]).map(
          (row) => row.id,
        );
      const insert = (tx: SqlClient, id: number) => tx.query(`INSERT INTO "${schema}".t (id) VALUES ($1)`, [id]);

      // Regression: on pg the nested call sent BEGIN and COMMIT again, and that COMMIT ended the outer transaction.
      it("rolls the nested work back with the outer transaction when the outer one throws after it", async () => {
        const failure = new Error("the request fails after the helper returned");
        await expect(
          transaction(kit.db, async (tx) => {
            await insert(tx, 100);
            await transaction(tx, (inner) => insert(inner, 101));
            throw failure;
          }),
        ).rejects.toBe(failure);
        expect(await ids()).toEqual([]);
      });

      it("rolls back only the nested work when it throws, and the outer transaction goes on and commits", async () => {
        const failure = new Error("inner");
        await transaction(kit.db, async (tx) => {
          await insert(tx, 110);
          await expect(
            transaction(tx, async (inner) => {
              await insert(inner, 111);
              await insert(inner, 110); // a unique violation aborts the nested work only
              throw failure;
            }),
          ).rejects.toMatchObject({ code: "23505" });
          await expect(
            transaction(tx, async (inner) => {
              await insert(inner, 112);
              throw failure;
            }),
          ).rejects.toBe(failure);
          // Deeper: a savepoint inside a savepoint.
          await transaction(tx, async (inner) => {
            await insert(inner, 113);
            await transaction(inner, (deeper) => insert(deeper, 114));
          });
        });
        expect(await ids()).toEqual([110, 113, 114]);
      });

      it("nests in a PGlite transaction opened with its own transaction()", async () => {
        const own = kit.db as SqlDatabase & { transaction?: SqlTransactor["transaction"] };
        if (own.transaction === undefined) return; // pg has no transaction object of its own
        await own.transaction(async (tx) => {
          await insert(tx, 120);
          await expect(
            transaction(tx, async (inner) => {
              await insert(inner, 121);
              throw new Error("inner");
            }),
          ).rejects.toThrow("inner");
        });
        expect(await ids()).toEqual([110, 113, 114, 120]);
      });

      // Regression: both calls read the depth before either sent its SAVEPOINT, so both used rest_webhooks_1; the
      // first one's RELEASE released the second's savepoint, whose ROLLBACK TO then undid the first one's writes.
      it("runs nested calls started together one at a time, so one's failure undoes only its own writes", async () => {
        const failure = new Error("the second helper fails");
        const between = async () =>
          (
            (await kit.db.query(`SELECT id FROM "${schema}".t WHERE id BETWEEN 130 AND 139 ORDER BY id`)).rows as {
              id: number;
            }[]
          ).map((row) => row.id);
        await transaction(kit.db, async (tx) => {
          await insert(tx, 130);
          const first = transaction(tx, async (inner) => {
            await insert(inner, 131);
            // Inside a nested call's work, a call nests deeper rather than waiting behind its sibling.
            await transaction(inner, (deeper) => insert(deeper, 132));
            return "first";
          });
          const second = transaction(tx, async (inner) => {
            await first;
            await insert(inner, 133);
            throw failure;
          });
          const [a, b] = await Promise.allSettled([first, second]);
          expect(a).toEqual({ status: "fulfilled", value: "first" });
          expect(b).toEqual({ status: "rejected", reason: failure });
        });
        expect(await between()).toEqual([130, 131, 132]);
      });

      it("ends a nested call's wait for its turn when its signal aborts: its work never runs", async () => {
        const reason = new Error("gave up in the queue");
        const controller = new AbortController();
        let ran = false;
        await transaction(kit.db, async (tx) => {
          let go!: () => void;
          const held = new Promise<void>((resolve) => (go = resolve));
          const first = transaction(tx, () => held);
          const second = transaction(
            tx,
            async () => {
              ran = true;
            },
            { signal: controller.signal },
          );
          controller.abort(reason);
          await expect(second).rejects.toBe(reason);
          go();
          await first;
        });
        expect(ran).toBe(false);
      });
    });

    describe("transaction with a signal", () => {
      const ids = async () =>
        (await kit.db.query(`SELECT id FROM "${schema}".t WHERE id >= 200 ORDER BY id`)).rows.map(
          (row) => (row as { id: number }).id,
        );

      it("stops waiting for work that never settles: rolls back and rejects with the signal's reason", async () => {
        const controller = new AbortController();
        const reason = new Error("too slow");
        let wrote!: () => void;
        const written = new Promise<void>((resolve) => (wrote = resolve));
        const pending = transaction(
          kit.db,
          async (tx) => {
            await tx.query(`INSERT INTO "${schema}".t (id) VALUES (200)`);
            wrote();
            await new Promise(() => {});
          },
          { signal: controller.signal },
        );
        await written;
        controller.abort(reason);
        await expect(pending).rejects.toBe(reason);
        expect(await ids()).toEqual([]);
        // Nothing is left open: the next transaction commits.
        await transaction(kit.db, (tx) => tx.query(`INSERT INTO "${schema}".t (id) VALUES (201)`));
        expect(await ids()).toEqual([201]);
      });

      it("runs nothing under a signal already aborted, and commits as before under one that never aborts", async () => {
        const reason = new Error("gone");
        let ran = false;
        await expect(
          transaction(
            kit.db,
            async () => {
              ran = true;
            },
            { signal: AbortSignal.abort(reason) },
          ),
        ).rejects.toBe(reason);
        expect(ran).toBe(false);
        const live = new AbortController().signal;
        await transaction(kit.db, (tx) => tx.query(`INSERT INTO "${schema}".t (id) VALUES (202)`), { signal: live });
        expect(await ids()).toEqual([201, 202]);
      });

      // A pool can close the connection: PGlite and a single Client can only roll back after the statement in flight.
      if (concurrent)
        it("closes a pool's connection at once, while a statement of work still runs, so nothing of it commits", async () => {
          const controller = new AbortController();
          let tx!: SqlClient;
          let sleeping!: Promise<unknown>;
          const pending = transaction(
            kit.db,
            async (client) => {
              tx = client;
              await client.query(`INSERT INTO "${schema}".t (id) VALUES (203)`);
              sleeping = client.query("SELECT pg_sleep(60), 'kit-abort-probe'");
              await sleeping;
              await client.query(`INSERT INTO "${schema}".t (id) VALUES (204)`);
            },
            { signal: controller.signal },
          );
          // Abort once the statement is running on the server.
          for (;;) {
            const { rows } = await kit.db.query(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE '%kit-abort-probe%' AND state = 'active' AND pid <> pg_backend_pid()",
            );
            if ((rows[0] as { n: number }).n > 0) break;
          }
          const reason = new Error("handler time-out");
          controller.abort(reason);
          await expect(pending).rejects.toBe(reason);
          await expect(sleeping).rejects.toThrow();
          // What work sends afterwards fails: the connection is gone, not back in the pool.
          await expect(tx.query("SELECT 1")).rejects.toThrow();
          expect(await ids()).toEqual([201, 202]);
          // The backend that ran the statement is ended too, so its locks do not outlive the abort: the row it
          // wrote can be written again at once.
          await transaction(kit.db, (other) => other.query(`INSERT INTO "${schema}".t (id) VALUES (203)`));
          expect(await ids()).toEqual([201, 202, 203]);
        });
    });

    // Only where several connections exist: PGlite and a single Client run one statement at a time.
    if (concurrent)
      it("migrate can race itself: concurrent callers apply each migration exactly once", async () => {
        const other = uniqueName("kitrace").toLowerCase();
        try {
          const applied = await Promise.all([1, 2, 3].map(() => migrate(kit.db, migrations(other))));
          expect(applied.flat().sort()).toEqual([`${other}:t@1`, `${other}:t@2`]);
        } finally {
          await kit.db.query(`DROP SCHEMA IF EXISTS "${other}" CASCADE`);
        }
      });
  });
}

describe("the PostgreSQL kit", () => {
  it("gives the migrations as one SQL script for other migration tools", () => {
    const sql = migrationSql(migrations("app"));
    expect(sql).toContain(
      '-- app: t@1\nCREATE SCHEMA IF NOT EXISTS "app";\nCREATE TABLE "app".t (id int PRIMARY KEY);',
    );
    expect(sql).toContain('ALTER TABLE "app".t ADD COLUMN note text;\nCREATE INDEX ON "app".t (note);');
  });

  // Regression: the script lacked the CREATE SCHEMA migrate() issues, so it failed on a fresh database.
  it("creates each schema once in the script, before its first migration", () => {
    const sql = migrationSql([...migrations("app"), ...migrations("other"), ...migrations("app")]);
    expect(sql.match(/CREATE SCHEMA IF NOT EXISTS "app";/g)).toHaveLength(1);
    expect(sql.match(/CREATE SCHEMA IF NOT EXISTS "other";/g)).toHaveLength(1);
    expect(sql.indexOf('CREATE SCHEMA IF NOT EXISTS "other"')).toBeLessThan(sql.indexOf('CREATE TABLE "other".t'));
  });

  // Regression: the script wrote the schema between quotes as given, and the comment naming each migration ran on to
  // the next line, so a quote in a schema or a line break in an id or schema turned the rest into statements.
  it("quotes each schema in the script and keeps its comments on one line", () => {
    const sql = migrationSql([
      { id: "odd@1\nDROP TABLE users;", schema: 'Odd"; DROP TABLE users; --', statements: ["SELECT 1"] },
    ]);
    expect(sql).toBe(
      '-- Odd"; DROP TABLE users; --: odd@1 DROP TABLE users;\nCREATE SCHEMA IF NOT EXISTS "Odd""; DROP TABLE users; --";\nSELECT 1;\n',
    );
  });

  // Regression: a pg_ schema passed every check and was refused by PostgreSQL only when migrate() ran.
  it("refuses a pg_ schema name up front (PostgreSQL reserves the prefix for system schemas)", () => {
    expect(() => schemaName("pg_app", "test")).toThrow(TypeError);
    expect(() => schemaName("pg_catalog", "test")).toThrow(TypeError);
    expect(schemaName("pgapp", "test")).toBe("pgapp");
    expect(schemaName("app_pg_x", "test")).toBe("app_pg_x");
  });

  kitContract(
    "PGlite (embedded)",
    async () => {
      const db = await openPgliteForTest();
      return { db, close: () => db.close() };
    },
    false,
  );

  onServer("on a server", () => {
    kitContract(
      "a pg Pool",
      async () => {
        const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
        return { db: pool, close: () => pool.end() };
      },
      true,
    );
    // Regression: the signal was not raced against pool.connect(), so with every connection held it rejected only
    // once one freed (or never: pg waits for ever by default), though handlerTimeoutMs promises to cover that wait.
    it("transaction on a full pg Pool rejects when its signal aborts, and leaks no connection", async () => {
      const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
      const held = await pool.connect();
      let ran = false;
      try {
        const reason = new Error("no connection in time");
        const controller = new AbortController();
        const pending = transaction(
          pool,
          async () => {
            ran = true;
          },
          { signal: controller.signal },
        );
        controller.abort(reason);
        const outcome = await Promise.race([
          pending.then(
            () => "resolved",
            (error: unknown) => error,
          ),
          new Promise((resolve) => setTimeout(() => resolve("still waiting for a connection"), 1000)),
        ]);
        expect(outcome).toBe(reason);
      } finally {
        held.release();
      }
      // The connection the pool hands the abandoned wait goes back: the next transaction gets it, on a pool of one.
      const next = transaction(pool, async (tx) => (await tx.query("SELECT 1 AS one")).rows, {
        signal: AbortSignal.timeout(2000),
      });
      expect(await next).toEqual([{ one: 1 }]);
      expect(ran).toBe(false);
      expect(pool.totalCount).toBe(1);
      await pool.end();
    });

    // Regression: the waiting migrator's snapshot (REPEATABLE READ, SERIALIZABLE) was taken by the lock's own SELECT
    // before its wait, and its backend's catalog cache could still hold the schema as missing, so once the holder
    // committed it ran the steps again: 23505 (the schema, or the recorded id) or 40001 at start-up.
    describe("migrate waits for a migrator at work, then sees its steps done", () => {
      const cases: [string, string, boolean][] = [
        ["at REPEATABLE READ", "repeatable\\ read", false],
        ["at SERIALIZABLE", "serializable", false],
        ["with the schema cached as missing on the waiting connections", "read\\ committed", true],
      ];
      for (const [name, level, lookedUp] of cases) {
        it(name, async ({ signal }) => {
          const schema = uniqueName("kitwait").toLowerCase();
          const holderPool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
          // The waits are watched from a connection of their own: within a transaction, PostgreSQL reads
          // pg_stat_activity once and shows that snapshot throughout, so the holder would never see the migrators'
          // backends that connected after its first look (28.2.2 "Viewing Statistics").
          const watcher = new pg.Pool({ connectionString: databaseUrl, max: 1 });
          const pool = new pg.Pool({
            connectionString: databaseUrl,
            max: 2,
            options: `-c default_transaction_isolation=${level}`,
            // Its waits told apart from those of other suites migrating on this server meanwhile.
            application_name: schema,
          });
          try {
            if (lookedUp) {
              const clients = [await pool.connect(), await pool.connect()];
              // DROP … IF EXISTS looks the name up and finds nothing: each backend caches the schema as missing.
              for (const client of clients) await client.query(`DROP SCHEMA IF EXISTS "${schema}"`);
              for (const client of clients) client.release();
            }
            let racing: Promise<PromiseSettledResult<string[]>[]> | undefined;
            let settled = false;
            await transaction(holderPool, async (tx) => {
              await tx.query("SELECT pg_advisory_xact_lock($1)", [4_242_017]); // migrate.ts MIGRATION_LOCK
              racing = Promise.allSettled([1, 2].map(() => migrate(pool, migrations(schema))));
              void racing.then(() => (settled = true));
              // Until both wait; a migrator that settled without waiting, or the test's time-out, ends the watch,
              // so the lock is released rather than held past the test for every later migrator on the server.
              while (!settled && !signal.aborted) {
                const { rows } = await watcher.query(
                  `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a USING (pid)
                  WHERE l.locktype = 'advisory' AND l.objid = $1 AND NOT l.granted AND a.application_name = $2`,
                  [4_242_017, schema],
                );
                if ((rows[0] as { n: number }).n === 2) break;
              }
              expect(settled).toBe(false);
              expect(await migrate(tx, migrations(schema))).toEqual([`${schema}:t@1`, `${schema}:t@2`]);
            });
            expect(await racing).toEqual([
              { status: "fulfilled", value: [] },
              { status: "fulfilled", value: [] },
            ]);
          } finally {
            await holderPool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
            await Promise.all([holderPool.end(), pool.end(), watcher.end()]);
          }
        });
      }
    });

    kitContract(
      "a pg Client",
      async () => {
        const client = new pg.Client({ connectionString: databaseUrl });
        await client.connect();
        return { db: client, close: () => client.end() };
      },
      false,
    );
  });
});
