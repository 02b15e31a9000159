/**
 * The PostgreSQL store against the bare client doing the same round trips: INSERT, then UPDATE. On a server (a pg
 * Pool, prepared statements) or on embedded PGlite (one connection: requests in flight queue on it).
 */
import { randomUUID } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import type { StoredResponse } from "../../src/idempotency";
import { idempotencyMigrations, PostgresIdempotencyStore } from "../../src/idempotency/postgres";
import { migrate, type SqlDatabase } from "../../src/postgres";
import { beginComplete, check, checkStore, compare, rate } from "./measure";

/** Where the store runs: a server's pool, or PGlite. */
export interface BenchDatabase {
  readonly name: "postgres" | "pglite";
  readonly db: SqlDatabase;
  /** The bare client's query, prepared where the client can. */
  raw(
    statement: { name: string; text: string },
    values: unknown[],
  ): Promise<{ rowCount?: number | null; affectedRows?: number }>;
  close(): Promise<void>;
}

export function serverDatabase(url: string, max: number): BenchDatabase {
  const pool = new pg.Pool({ connectionString: url, max });
  return {
    name: "postgres",
    db: pool,
    raw: (statement, values) => pool.query({ ...statement, values }),
    close: () => pool.end(),
  };
}

/** An in-memory PGlite (initdb takes several seconds, once). */
export async function pgliteDatabase(): Promise<BenchDatabase> {
  const db = await PGlite.create();
  return { name: "pglite", db, raw: (statement, values) => db.query(statement.text, values), close: () => db.close() };
}

const changed = (result: { rowCount?: number | null; affectedRows?: number }) =>
  result.rowCount ?? result.affectedRows ?? 0;

export async function benchPostgres(
  database: BenchDatabase,
  response: StoredResponse,
  ms: number,
  concurrency: number,
): Promise<{ ours: number; raw: number; ratio: number }> {
  const pool = database.db;
  const schema = `bench_idem_${process.pid}_${randomUUID().slice(0, 8).replaceAll("-", "")}`;
  const raw = `"${schema}_raw"."idempotency_keys"`;
  try {
    await migrate(pool, [...idempotencyMigrations({ schema }), ...idempotencyMigrations({ schema: `${schema}_raw` })]);
    const store = new PostgresIdempotencyStore(pool, { schema });
    await checkStore(store, response, "pg");

    // The bare baseline, prepared like ours: a plain INSERT … ON CONFLICT DO NOTHING and an UPDATE fenced by the
    // lease token, as a correct hand-written store must (an unfenced UPDATE would overwrite a lease taken over).
    const insert = {
      name: `${schema}_raw_i`,
      text: `INSERT INTO ${raw} (key, fingerprint, lease_token, expires_at) VALUES ($1, $2, $3, now() + interval '1 minute') ON CONFLICT DO NOTHING`,
    };
    const update = {
      name: `${schema}_raw_u`,
      text: `UPDATE ${raw} SET status = $2, headers = $3::jsonb, body = $4, lease_token = NULL, expires_at = now() + interval '1 minute' WHERE key = $1 AND lease_token = $5`,
    };
    const headers = JSON.stringify(response.headers);
    const body = Buffer.from(response.body);
    check(changed(await database.raw(insert, ["check", "fp", "t"])) === 1, "raw INSERT");
    check(changed(await database.raw(update, ["check", response.status, headers, body, "t"])) === 1, "raw UPDATE");

    // As long as the middleware's ("v2." and 43 base64url characters).
    const fp = "v2.fingerprint-of-46-characters-xxxxxxxxxxxxxx";
    const {
      ours: o,
      theirs: r,
      ratio,
    } = await compare(
      beginComplete(store, fp, response),
      async (i) => {
        const key = `b${i}`;
        const token = randomUUID();
        if (changed(await database.raw(insert, [key, fp, token])) === 1) {
          await database.raw(update, [key, response.status, headers, body, token]);
        }
      },
      { ms, concurrency },
    );
    const [ours, bare] = [o.wall, r.wall];
    console.log(
      `${database.name} ${response.body.byteLength} B body: ours ${rate(ours)}, raw INSERT + UPDATE ${rate(bare)} (${concurrency} in flight)`,
    );
    return { ours, raw: bare, ratio: ratio.wall };
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}_raw" CASCADE`);
  }
}
