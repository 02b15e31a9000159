/**
 * requestTransaction: one transaction per write request, shared through transactionOf with everything inside it,
 * committed below 500 and rolled back on a 5xx or a throw; with idempotency() on a store per request, a key's
 * record commits with the handler's writes or not at all.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type Handler, HttpProblem, type HttpRequest, json } from "../../src/http/index";
import { idempotency } from "../../src/idempotency/index";
import { idempotencyMigrations, PostgresIdempotencyStore } from "../../src/idempotency/postgres/index";
import { migrate, requestTransaction, type SqlClient, type SqlDatabase, transactionOf } from "../../src/postgres/index";
import { onServer, openPgliteForTest } from "../support/databases";
import { databaseUrl, uniqueName } from "../support/services";

function request(method: string, headers: Record<string, string> = {}): HttpRequest {
  return { method, path: "/things", search: "", query: {}, headers, body: new Uint8Array(0) };
}

function contract(name: string, open: () => Promise<{ db: SqlDatabase; close(): Promise<void> }>): void {
  describe(name, () => {
    let db: SqlDatabase;
    let close: () => Promise<void>;
    const schema = uniqueName("reqtx").toLowerCase();
    const things = `"${schema}".things`;
    const count = async () =>
      Number(((await db.query(`SELECT count(*)::int AS n FROM ${things}`)).rows[0] as { n: number }).n);
    beforeAll(async () => {
      ({ db, close } = await open());
      await migrate(db, [
        ...idempotencyMigrations({ schema }),
        { id: "things@1", schema, statements: [`CREATE TABLE ${things} (id serial PRIMARY KEY, key text)`] },
      ]);
    });
    afterAll(async () => {
      await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await close();
    });

    const insert =
      (status: number): Handler =>
      async (req) => {
        const tx = transactionOf(req) as SqlClient;
        await tx.query(`INSERT INTO ${things} (key) VALUES ($1)`, [req.headers["idempotency-key"] ?? null]);
        return json(status, { ok: status < 500 });
      };

    it("commits a response below 500, then calls onCommit; rolls back a 5xx response", async () => {
      let commits = 0;
      const scope = requestTransaction(db, { onCommit: () => void commits++ });
      const before = await count();
      expect((await scope(insert(201))(request("POST"))).status).toBe(201);
      expect((await scope(insert(422))(request("POST"))).status).toBe(422);
      expect(commits).toBe(2);
      expect((await scope(insert(503))(request("POST"))).status).toBe(503);
      expect(commits).toBe(2);
      expect(await count()).toBe(before + 2);
    });

    // Regression: an onCommit that threw turned the committed write into a 500, inviting a retry that repeats it.
    it("keeps the committed response when onCommit throws or rejects, and tells onCommitError", async () => {
      const reported: unknown[] = [];
      const failure = new Error("wake failed");
      const before = await count();
      const throwing = requestTransaction(db, {
        onCommit: () => {
          throw failure;
        },
        onCommitError: (error, req) => reported.push(error, req.method),
      });
      expect((await throwing(insert(201))(request("POST"))).status).toBe(201);
      const rejecting = requestTransaction(db, {
        onCommit: async () => {
          throw failure;
        },
        onCommitError: (error, req) => reported.push(error, req.method),
      });
      expect((await rejecting(insert(201))(request("PUT"))).status).toBe(201);
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(reported).toEqual([failure, "POST", failure, "PUT"]);
      // A reporter that throws changes nothing either.
      const unlucky = requestTransaction(db, {
        onCommit: () => {
          throw failure;
        },
        onCommitError: () => {
          throw new Error("the logger is down");
        },
      });
      const quiet = vi.spyOn(console, "error").mockImplementation(() => {});
      try {
        expect((await unlucky(insert(201))(request("PATCH"))).status).toBe(201);
      } finally {
        quiet.mockRestore();
      }
      expect(await count()).toBe(before + 3);
    });

    it("rolls back and rethrows what the handler throws", async () => {
      const before = await count();
      const failing: Handler = async (req) => {
        await insert(200)(req);
        throw new HttpProblem({ status: 409, code: "conflict" });
      };
      await expect(requestTransaction(db)(failing)(request("PATCH"))).rejects.toMatchObject({ code: "conflict" });
      expect(await count()).toBe(before);
    });

    // Regression: on pg, a handler that caught a failed statement's error and answered 201 had that 201 sent and
    // onCommit called, though PostgreSQL had rolled the transaction back at COMMIT (the tag ROLLBACK, no error).
    it("rethrows (25P02) rather than answer when a failed statement rolled the transaction back at COMMIT", async () => {
      const before = await count();
      let commits = 0;
      const swallowing: Handler = async (req) => {
        await insert(201)(req);
        await (transactionOf(req) as SqlClient).query("SELECT 1 / 0").catch(() => undefined);
        return json(201, { created: true });
      };
      await expect(
        requestTransaction(db, { onCommit: () => void commits++ })(swallowing)(request("POST")),
      ).rejects.toMatchObject({ code: "25P02" });
      expect(commits).toBe(0);
      expect(await count()).toBe(before);
    });

    it("leaves safe methods out (no transaction), and the request carries none once answered", async () => {
      let seen: SqlClient | undefined = {} as SqlClient;
      const req = request("GET");
      await requestTransaction(db)((r) => {
        seen = transactionOf(r);
        return json(200, {});
      })(req);
      expect(seen).toBeUndefined();
      const write = request("DELETE");
      await requestTransaction(db)(insert(204))(write);
      expect(transactionOf(write)).toBeUndefined();
    });

    it("works for a frozen request", async () => {
      const before = await count();
      await requestTransaction(db)(insert(201))(Object.freeze(request("POST")));
      expect(await count()).toBe(before + 1);
    });

    it("with idempotency on the request's store: the record commits with the write, or neither does", async () => {
      const base = new PostgresIdempotencyStore(db, { schema });
      const protect = idempotency({
        store: (req) => base.withClient(transactionOf(req) ?? db),
        identify: () => "caller",
      });
      let fail = true;
      const handler: Handler = async (req) => {
        await insert(201)(req);
        if (fail) throw new Error("crash after the write");
        return json(201, { created: true });
      };
      const app = requestTransaction(db)(protect(handler));
      const keyed = () => request("POST", { "idempotency-key": '"k-1"' });
      const before = await count();
      await expect(app(keyed())).rejects.toThrow("crash after the write");
      expect(await count()).toBe(before); // the write and the record rolled back together: the key is free
      fail = false;
      expect((await app(keyed())).status).toBe(201);
      const replay = await app(keyed());
      expect(replay.headers["idempotent-replayed"]).toBe("true");
      expect(await count()).toBe(before + 1);
    });
  });
}

describe("requestTransaction", () => {
  contract("on PGlite", async () => {
    const db = await openPgliteForTest();
    return { db, close: () => db.close() };
  });
  onServer("on a server", () => {
    contract("on a pg Pool", async () => {
      const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
      return { db: pool, close: () => pool.end() };
    });
  });
  it("refuses something that cannot run SQL", () => {
    expect(() => requestTransaction({} as never)).toThrow(TypeError);
  });
});
