import { createHash } from "node:crypto";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate, migrationSql, type SqlDatabase } from "../../src/postgres/index";
import { createEndpointRateLimiter } from "../../src/ratelimit/endpoint-limiter";
import { compilePolicies } from "../../src/ratelimit/index";
import { createPostgresRateLimitStore, rateLimitMigrations } from "../../src/ratelimit/postgres/index";
import { databases, type OpenDatabase } from "../support/databases";
import { uniqueName } from "../support/services";
import { storeContract } from "./store-contract";

const sha256 = (key: string) => createHash("sha256").update(key, "utf8").digest("base64url");

describe.each(databases())("the PostgreSQL rate-limit store on $name", (backend) => {
  const schema = uniqueName("rl_pg").toLowerCase();
  let open: OpenDatabase;
  let db: SqlDatabase;
  beforeAll(async () => {
    open = await backend.open({ max: 8 });
    db = open.db;
    await migrate(db, rateLimitMigrations({ schema }));
  });
  afterAll(async () => {
    await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await open.close();
  });

  storeContract(`postgres (${backend.name})`, () => ({ store: createPostgresRateLimitStore({ client: db, schema }) }));

  it("exports its migration as SQL, and applying it again changes nothing", async () => {
    expect(migrationSql(rateLimitMigrations({ schema }))).toContain(`"${schema}"."rate_limits"`);
    expect(await migrate(db, rateLimitMigrations({ schema }))).toEqual([]);
    expect(() => rateLimitMigrations({ schema: "a.b" })).toThrow(TypeError);
    expect(() => createPostgresRateLimitStore({ client: db, schema: 'x"; --' })).toThrow(TypeError);
    // Regression: missing options threw "Cannot destructure property 'client'", naming nothing the caller wrote.
    expect(() => createPostgresRateLimitStore(undefined as never)).toThrow(/createPostgresRateLimitStore: expected/);
  });

  // Several connections racing for one key: a server only (PGlite has one connection).
  if (backend.concurrent) {
    it("admits exactly the allowance to concurrent callers on one key (a row lock)", async () => {
      const store = createPostgresRateLimitStore({ client: db, schema });
      const limiter = createEndpointRateLimiter({ store, burst: 5 });
      const now = 1_763_000_000_000;
      const answers = await Promise.all(Array.from({ length: 20 }, () => limiter.acquire("we_race", 1, now)));
      expect(answers.filter((a) => a.allowed)).toHaveLength(5);
    });

    // Regression: the check inserted the row without locking it, then locked it with SELECT … FOR UPDATE; a purge (any
    // process's, every 256 checks) that deleted the expired row in between left nothing to lock, so the request was
    // admitted and its UPDATE wrote nothing: the key stayed fresh, and the next request was admitted too.
    it("records an admission whose expired row another process purged while the check was locking it", async () => {
      const connection = await (db as pg.Pool).connect();
      const purger = await (db as pg.Pool).connect();
      try {
        const set = compilePolicies([{ name: "p", quota: 1, window: 60 }]);
        const now = 1_763_000_000_000;
        const key = uniqueName("purged");
        let purged = 0;
        // The purge runs on its own connection just before the check's first lock-taking SELECT.
        const racing: SqlDatabase = {
          async query(text: string, values?: unknown[]) {
            if (purged === 0 && text.startsWith("SELECT set_id")) {
              const purge = `DELETE FROM "${schema}".rate_limits WHERE key = $1 AND expires_ms <= $2`;
              purged = (await purger.query(purge, [sha256(key), now + 60_000])).rowCount as number;
            }
            return connection.query(text, values);
          },
        } as SqlDatabase;
        const plain = createPostgresRateLimitStore({ client: db, schema });
        expect((await plain.check(key, set, now)).allowed).toBe(true); // the row now expires at now + 60 s
        const later = now + 60_000;
        expect((await createPostgresRateLimitStore({ client: racing, schema }).check(key, set, later)).allowed).toBe(
          true,
        );
        expect(purged).toBeGreaterThan(0);
        expect((await plain.check(key, set, later)).allowed).toBe(false);
      } finally {
        connection.release();
        purger.release();
      }
    });
  }

  // Regression: the purge ran after the check committed and its failure rejected the check, so a request the store had
  // admitted and counted was answered with a 500; the purge is housekeeping a later check does again.
  it("resolves a check whose purge afterwards fails", async () => {
    const connection = backend.concurrent ? await (db as pg.Pool).connect() : undefined;
    const on = connection ?? db;
    try {
      const failing = {
        query: (text: string, values?: unknown[]) =>
          text.startsWith("DELETE")
            ? Promise.reject(new Error("canceling statement due to statement timeout"))
            : on.query(text, values),
      } as SqlDatabase;
      const store = createPostgresRateLimitStore({ client: failing, schema });
      const set = compilePolicies([{ name: "p", quota: 1_000, window: 1 }]);
      const key = uniqueName("purge_fails");
      const now = 1_763_000_000_000;
      // The 256th check purges.
      for (let i = 0; i < 256; i++) expect((await store.check(key, set, now + i)).allowed).toBe(true);
    } finally {
      connection?.release();
    }
  });

  it("no longer reads a row an earlier version keyed by the key itself (the upgrade starts each key afresh)", async () => {
    const store = createPostgresRateLimitStore({ client: db, schema });
    const set = compilePolicies([{ name: "p", quota: 1, window: 60 }]);
    const now = 1_763_000_000_000;
    // What an earlier version wrote for "legacy:k" after admitting it at `now`: a refusal until now + 60 s.
    await db.query(`INSERT INTO "${schema}".rate_limits (key, set_id, state, expires_ms) VALUES ($1, $2, $3, $4)`, [
      "legacy:k",
      set.id,
      [now + 60_000, 0],
      now + 60_000,
    ]);
    expect((await store.check("legacy:k", set, now)).allowed).toBe(true);
    expect((await store.check("legacy:k", set, now)).allowed).toBe(false);
  });

  it("purges keys whose state expired, so keys never seen again do not pile up", async () => {
    const store = createPostgresRateLimitStore({ client: db, schema });
    const limiter = createEndpointRateLimiter({ store, prefix: "purge:" });
    const now = 1_763_000_000_000;
    for (let i = 0; i < 300; i++) await limiter.acquire(`we_${i}`, 1_000, now);
    // The state of a 1,000/s limit with burst 1 expires 1 ms later; a later check purges up to 64 of those rows.
    for (let i = 0; i < 256; i++) await limiter.acquire("we_again", 1_000, now + 10_000 + i);
    // Rows are keyed by the SHA-256 of the key (base64url).
    const rowKeys = Array.from({ length: 300 }, (_, i) => sha256(`purge:we_${i}`));
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM "${schema}".rate_limits WHERE key = ANY($1)`, [
      rowKeys,
    ]);
    expect((rows[0] as { n: number }).n).toBeLessThan(300);
  });
});
