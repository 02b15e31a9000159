/**
 * The PostgreSQL kit on every client it accepts: a pg Pool, a pg Client, and PGlite (embedded). One contract:
 * transaction() commits or rolls back as one, migrate() applies each migration once and can race itself.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Migration, migrate, migrationSql, type SqlDatabase, transaction } from "../../src/postgres/index";
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
    expect(sql).toContain('-- app: t@1\nCREATE TABLE "app".t (id int PRIMARY KEY);');
    expect(sql).toContain('ALTER TABLE "app".t ADD COLUMN note text;\nCREATE INDEX ON "app".t (note);');
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
