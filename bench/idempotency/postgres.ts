/** The PostgreSQL store against the bare client doing the same round trips: INSERT, then UPDATE. */
import { randomUUID } from "node:crypto";
import pg from "pg";
import type { StoredResponse } from "../../src/idempotency";
import { idempotencyMigrations, PostgresIdempotencyStore } from "../../src/idempotency/postgres";
import { migrate } from "../../src/postgres";
import { check, compare, rate } from "./measure";

export async function benchPostgres(
  url: string,
  response: StoredResponse,
  ms: number,
  concurrency: number,
): Promise<{ ours: number; raw: number; ratio: number }> {
  const pool = new pg.Pool({ connectionString: url, max: concurrency });
  const schema = `bench_idem_${process.pid}_${randomUUID().slice(0, 8).replaceAll("-", "")}`;
  const raw = `"${schema}_raw"."idempotency_keys"`;
  try {
    await migrate(pool, [...idempotencyMigrations({ schema }), ...idempotencyMigrations({ schema: `${schema}_raw` })]);
    const store = new PostgresIdempotencyStore(pool, { schema });
    const first = await store.begin("check", "fp", 60_000);
    check(first.kind === "acquired", "pg begin acquires");
    check(
      first.kind === "acquired" && (await store.complete("check", first.leaseToken, response, 60_000)),
      "pg complete",
    );
    const again = await store.begin("check", "fp", 60_000);
    check(
      again.kind === "completed" && Buffer.from(again.response.body).equals(Buffer.from(response.body)),
      "pg replay",
    );

    // The bare baseline, prepared like ours: a plain INSERT … ON CONFLICT DO NOTHING and an UPDATE.
    const insert = {
      name: `${schema}_raw_i`,
      text: `INSERT INTO ${raw} (key, fingerprint, lease_token, expires_at) VALUES ($1, $2, $3, now() + interval '1 minute') ON CONFLICT DO NOTHING`,
    };
    const update = {
      name: `${schema}_raw_u`,
      text: `UPDATE ${raw} SET status = $2, headers = $3::jsonb, body = $4, lease_token = NULL, expires_at = now() + interval '1 minute' WHERE key = $1`,
    };
    const headers = JSON.stringify(response.headers);
    const body = Buffer.from(response.body);
    check((await pool.query({ ...insert, values: ["check", "fp", "t"] })).rowCount === 1, "raw INSERT");
    check(
      (await pool.query({ ...update, values: ["check", response.status, headers, body] })).rowCount === 1,
      "raw UPDATE",
    );

    const fp = "fingerprint-of-43-characters-xxxxxxxxxxxxx";
    const {
      ours: o,
      theirs: r,
      ratio,
    } = await compare(
      async (i) => {
        const key = `b${i}`;
        const found = await store.begin(key, fp, 60_000);
        if (found.kind === "acquired") await store.complete(key, found.leaseToken, response, 60_000);
      },
      async (i) => {
        const key = `b${i}`;
        if ((await pool.query({ ...insert, values: [key, fp, randomUUID()] })).rowCount === 1) {
          await pool.query({ ...update, values: [key, response.status, headers, body] });
        }
      },
      { ms, concurrency },
    );
    const [ours, bare] = [o.wall, r.wall];
    console.log(
      `postgres ${response.body.byteLength} B body: ours ${rate(ours)}, raw INSERT + UPDATE ${rate(bare)} (${concurrency} in flight)`,
    );
    return { ours, raw: bare, ratio: ratio.wall };
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE; DROP SCHEMA IF EXISTS "${schema}_raw" CASCADE`);
    await pool.end();
  }
}
