import { createHash } from "node:crypto";
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
  }

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
