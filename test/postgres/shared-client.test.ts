/**
 * transaction() on one connection that several callers share (a single `pg` Client, or PGlite): transactions started
 * together run one after the other, each committing or rolling back only its own writes, as a Pool's do side by side.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SqlClient, type SqlDatabase, transaction } from "../../src/postgres/index";
import { onServer, openPgliteForTest } from "../support/databases";
import { databaseUrl, uniqueName } from "../support/services";

function sharedContract(name: string, open: () => Promise<{ db: SqlDatabase; close(): Promise<void> }>): void {
  describe(name, () => {
    let db: SqlDatabase;
    let close: () => Promise<void>;
    const schema = uniqueName("shared").toLowerCase();
    const t = `"${schema}".t`;
    const insert = (tx: SqlClient, id: number) => tx.query(`INSERT INTO ${t} (id) VALUES ($1)`, [id]);
    const ids = async (from: number, to: number) =>
      (await db.query(`SELECT id FROM ${t} WHERE id BETWEEN $1 AND $2 ORDER BY id`, [from, to])).rows.map(
        (row) => (row as { id: number }).id,
      );
    beforeAll(async () => {
      ({ db, close } = await open());
      await db.query(`CREATE SCHEMA "${schema}"`);
      await db.query(`CREATE TABLE ${t} (id int PRIMARY KEY)`);
      await db.query(`CREATE TABLE "${schema}".counter (n int NOT NULL)`);
      await db.query(`INSERT INTO "${schema}".counter (n) VALUES (0)`);
    });
    afterAll(async () => {
      await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await close();
    });

    // Regression: on a pg Client both sent BEGIN (the second only a warning), their statements interleaved in one
    // transaction, and the first one's ROLLBACK undid the second's writes, which then reported success.
    it("a rollback undoes only its own transaction's writes, not those of one started beside it", async () => {
      const failure = new Error("the first request fails");
      const events: string[] = [];
      const first = transaction(db, async (tx) => {
        events.push("first:start");
        await insert(tx, 10);
        // Round trips on the one connection: whatever the second had queued on it runs meanwhile.
        await tx.query("SELECT 1");
        await tx.query("SELECT 1");
        events.push("first:end");
        throw failure;
      });
      const second = transaction(db, async (tx) => {
        events.push("second:start");
        await insert(tx, 11);
        events.push("second:end");
        return "second";
      });
      const [a, b] = await Promise.allSettled([first, second]);
      expect(a).toEqual({ status: "rejected", reason: failure });
      expect(b).toEqual({ status: "fulfilled", value: "second" });
      expect(await ids(10, 19)).toEqual([11]);
      expect(events).toEqual(["first:start", "first:end", "second:start", "second:end"]);
    });

    it("a commit does not take along the writes of a transaction beside it that then fails", async () => {
      const failure = new Error("the second request fails");
      const first = transaction(db, async (tx) => {
        await insert(tx, 20);
        await tx.query("SELECT 1");
        await tx.query("SELECT 1");
        return "first";
      });
      const second = transaction(db, async (tx) => {
        await insert(tx, 21);
        throw failure;
      });
      const [a, b] = await Promise.allSettled([first, second]);
      expect(a).toEqual({ status: "fulfilled", value: "first" });
      expect(b).toEqual({ status: "rejected", reason: failure });
      expect(await ids(20, 29)).toEqual([20]);
    });

    it("loses no update of many read-modify-write transactions started together", async () => {
      const counter = `"${schema}".counter`;
      await Promise.all(
        Array.from({ length: 12 }, () =>
          transaction(db, async (tx) => {
            const { rows } = await tx.query(`SELECT n FROM ${counter}`);
            await tx.query(`UPDATE ${counter} SET n = $1`, [(rows[0] as { n: number }).n + 1]);
          }),
        ),
      );
      expect((await db.query(`SELECT n FROM ${counter}`)).rows).toEqual([{ n: 12 }]);
    });

    it("nests a call made inside work in a savepoint, while a transaction beside it waits its turn", async () => {
      const failure = new Error("inner");
      const events: string[] = [];
      const first = transaction(db, async (tx) => {
        await insert(tx, 30);
        await expect(
          transaction(tx, async (inner) => {
            await insert(inner, 31);
            throw failure;
          }),
        ).rejects.toBe(failure);
        await transaction(tx, (inner) => insert(inner, 32));
        events.push("first:end");
      });
      const second = transaction(db, async (tx) => {
        events.push("second:start");
        await insert(tx, 33);
      });
      await Promise.all([first, second]);
      expect(await ids(30, 39)).toEqual([30, 32, 33]);
      expect(events).toEqual(["first:end", "second:start"]);
    });

    it("ends the wait for its turn when its signal aborts: its work never runs, and the queue goes on", async () => {
      const reason = new Error("gave up waiting for the connection");
      const controller = new AbortController();
      let go!: () => void;
      const held = new Promise<void>((resolve) => (go = resolve));
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      let ran = false;
      const first = transaction(db, async (tx) => {
        await insert(tx, 40);
        started();
        await held;
      });
      await running;
      const second = transaction(
        db,
        async () => {
          ran = true;
        },
        { signal: controller.signal },
      );
      const third = transaction(db, (tx) => insert(tx, 41));
      controller.abort(reason);
      await expect(second).rejects.toBe(reason);
      go();
      await Promise.all([first, third]);
      expect(ran).toBe(false);
      expect(await ids(40, 49)).toEqual([40, 41]);
    });
  });
}

describe("transaction on one shared connection", () => {
  sharedContract("PGlite (embedded)", async () => {
    const db = await openPgliteForTest();
    return { db, close: () => db.close() };
  });
  onServer("on a server", () => {
    sharedContract("a pg Client", async () => {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      return { db: client, close: () => client.end() };
    });
  });
});
