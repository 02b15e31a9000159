import { randomUUID } from "node:crypto";
import { z } from "zod";
import { schemaName, tableIn } from "../../postgres/identifier";
import { decodeRow } from "../../postgres/rows";
import { assertSqlClient, type SqlClient } from "../../postgres/sql-client";
import { affected, run, type Statement, statementNames } from "../../postgres/statement";
import { IdempotencyError } from "../errors";
import type { BeginResult, IdempotencyStore, StoredResponse } from "../store";
import {
  checkBeginText,
  checkCompleteText,
  checkLeaseMs,
  checkReleaseText,
  checkStatus,
  checkTtlMs,
} from "../store-arguments";
import { IDEMPOTENCY_TABLE } from "./migration";

/** Options of {@link PostgresIdempotencyStore}. */
export interface PostgresStoreOptions {
  /**
   * The schema of the `idempotency_keys` table ({@link idempotencyMigrations} creates it).
   * @default "public"
   */
  schema?: string;
  /**
   * Send statements as named prepared statements (parsed once per connection). Turn off behind a
   * transaction-pooling proxy that does not support them.
   * @default true
   */
  prepare?: boolean;
}

const beginRowSchema = z.object({
  acquired: z.boolean(),
  fingerprint: z.string(),
  status: z.number().int().min(100).max(599).nullable(),
  headers: z.record(z.string(), z.union([z.string(), z.array(z.string())])).nullable(),
  body: z.instanceof(Uint8Array).nullable(),
  remaining_ms: z.number(),
});

function statements(schema: string) {
  const t = tableIn(schema, IDEMPOTENCY_TABLE);
  // begin tries a fresh key first, the usual case: a plain insert that sends no row back (its reply and the
  // parsing of a returned row were a tenth of a begin+complete, bench/idempotency "postgres begin+complete").
  // When the key is taken, the second statement always updates the conflicting row so that RETURNING yields its
  // latest committed version (a plain SELECT after ON CONFLICT DO NOTHING may not see a row committed by a
  // concurrent transaction, being bound to the statement's snapshot), and reclaims it when it has expired.
  // statement_timestamp() is one instant for the whole statement: every CASE agrees on "expired".
  const expired = "r.expires_at <= statement_timestamp()";
  const lease = "($1, $2, $3, statement_timestamp() + $4::int8 * interval '1 millisecond')";
  // A lease is held until it runs out, or for as long as the transaction that took it is open: its row is then this
  // transaction's own uncommitted write (xmin), which every other begin waits on, so nobody can have taken it over.
  // Refused there, the transaction would commit the effect beside a record still in progress, for a retry to redo.
  // txid_current() is the top-level transaction's id (with its epoch above the 32 bits xmin holds); a lease taken in
  // a savepoint has a subtransaction's id, and runs out as any other.
  const held = "(expires_at > clock_timestamp() OR xmin::text = (txid_current() % 4294967296)::text)";
  return {
    insert: `INSERT INTO ${t} (key, fingerprint, lease_token, expires_at) VALUES ${lease} ON CONFLICT (key) DO NOTHING`,
    begin: `INSERT INTO ${t} AS r (key, fingerprint, lease_token, expires_at)
VALUES ${lease}
ON CONFLICT (key) DO UPDATE SET
  fingerprint = CASE WHEN ${expired} THEN excluded.fingerprint ELSE r.fingerprint END,
  lease_token = CASE WHEN ${expired} THEN excluded.lease_token ELSE r.lease_token END,
  status = CASE WHEN ${expired} THEN NULL ELSE r.status END,
  headers = CASE WHEN ${expired} THEN NULL ELSE r.headers END,
  body = CASE WHEN ${expired} THEN NULL ELSE r.body END,
  expires_at = CASE WHEN ${expired} THEN excluded.expires_at ELSE r.expires_at END
RETURNING r.lease_token IS NOT DISTINCT FROM $3 AS acquired, r.fingerprint, r.status, r.headers, r.body,
  (extract(epoch FROM r.expires_at - statement_timestamp()) * 1000)::float8 AS remaining_ms`,
    complete: `UPDATE ${t} SET status = $3, headers = $4::jsonb, body = $5, lease_token = NULL,
  expires_at = clock_timestamp() + $6::int8 * interval '1 millisecond'
WHERE key = $1 AND lease_token = $2 AND status IS NULL AND ${held}`,
    // A lease that is no longer held is not released, as in complete (fencing).
    release: `DELETE FROM ${t} WHERE key = $1 AND lease_token = $2 AND status IS NULL AND ${held}`,
    // $1 batch size. The expired rows first by the expires_at index, at most $1 a statement: after a long outage one
    // DELETE of the whole backlog held its locks and WAL for as long as it took. The outer test again: a row reclaimed
    // by a `begin` after the inner read is rechecked at its new version (READ COMMITTED), and kept. SKIP LOCKED: a row
    // a `begin` is taking over, or another purger holds, is passed over, not waited for; two purgers take disjoint
    // rows, so one that deletes less than a batch leaves only rows another transaction holds.
    purge: `DELETE FROM ${t} WHERE expires_at <= clock_timestamp() AND key IN (
  SELECT key FROM ${t} WHERE expires_at <= clock_timestamp() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED
)`,
  };
}

/** The most expired rows one purge statement deletes (as the inbox's purge): a long purge runs as short transactions. */
export const IDEMPOTENCY_PURGE_BATCH = 10_000;

type Statements = Record<keyof ReturnType<typeof statements>, Statement>;

// One set of statements per schema: `withClient` makes a store per request, and names hash the schema.
const bySchema = new Map<string, Statements>();

function statementsOf(schema: string): Statements {
  let found = bySchema.get(schema);
  if (found === undefined) {
    found = statementNames("rw_idem", schema, statements(schema));
    bySchema.set(schema, found);
  }
  return found;
}

function invalid(cause?: unknown): IdempotencyError {
  return new IdempotencyError("idempotency_record_invalid", "The PostgreSQL idempotency row cannot be decoded.", {
    cause,
  });
}

/**
 * A store in one PostgreSQL table, shared by every instance. `begin` on a fresh key is one plain
 * `INSERT … ON CONFLICT DO NOTHING`; on a key already taken, a second, atomic `INSERT … ON CONFLICT DO UPDATE`
 * reads the record or reclaims it when expired. Times come from the database clock, so instances' clocks need
 * not agree. A lease taken on an open transaction (`withClient`) is held until that transaction ends, even past
 * `leaseMs`: every other `begin` waits for it, so `complete` there never leaves the effect without its record.
 *
 * @example
 * await migrate(pool, idempotencyMigrations());
 * const store = new PostgresIdempotencyStore(pool);
 * // inside a transaction, sharing it with the business data:
 * const tx = store.withClient(client);
 */
export class PostgresIdempotencyStore implements IdempotencyStore {
  readonly #client: SqlClient;
  readonly #options: PostgresStoreOptions;
  readonly #sql: Statements;
  readonly #prepare: boolean;

  /**
   * @param client a `pg` Pool, Client or PoolClient, or PGlite (see `SqlClient` in `rest-webhooks/postgres`).
   * @param options the schema, and whether to use named prepared statements.
   */
  constructor(client: SqlClient, options: PostgresStoreOptions = {}) {
    assertSqlClient(client, "PostgresIdempotencyStore");
    this.#client = client;
    this.#options = options;
    this.#sql = statementsOf(schemaName(options.schema, "PostgresIdempotencyStore"));
    this.#prepare = options.prepare ?? true;
  }

  /**
   * The same store issuing its statements on `client`, e.g. the `tx` of an open transaction: the record then
   * commits or rolls back with the business data (exactly once, see docs/idempotency.md).
   */
  withClient(client: SqlClient): PostgresIdempotencyStore {
    return new PostgresIdempotencyStore(client, this.#options);
  }

  async begin(key: string, fingerprint: string, leaseMs: number): Promise<BeginResult> {
    checkLeaseMs(leaseMs);
    checkBeginText(key, fingerprint);
    const token = randomUUID();
    const values = [key, fingerprint, token, leaseMs];
    if (affected(await this.#query("insert", values)) === 1) return { kind: "acquired", leaseToken: token };
    // The key is taken (a retry, a request in flight, or a record that has expired): reclaim it or read it.
    const result = await this.#query("begin", values);
    const row = decodeRow(beginRowSchema, result.rows[0], invalid);
    if (row.acquired) return { kind: "acquired", leaseToken: token };
    if (row.status === null) {
      return { kind: "in-progress", fingerprint: row.fingerprint, retryAfterMs: Math.max(0, row.remaining_ms) };
    }
    const response: StoredResponse = {
      status: row.status,
      headers: row.headers ?? {},
      body: row.body ?? new Uint8Array(0),
    };
    return { kind: "completed", fingerprint: row.fingerprint, response };
  }

  async complete(key: string, leaseToken: string, response: StoredResponse, ttlMs: number): Promise<boolean> {
    checkTtlMs(ttlMs);
    checkStatus(response);
    checkCompleteText(key, leaseToken, response);
    const body = Buffer.from(response.body.buffer, response.body.byteOffset, response.body.byteLength);
    const values = [key, leaseToken, response.status, JSON.stringify(response.headers), body, ttlMs];
    return affected(await this.#query("complete", values)) === 1;
  }

  async release(key: string, leaseToken: string): Promise<boolean> {
    checkReleaseText(key, leaseToken);
    return affected(await this.#query("release", [key, leaseToken])) === 1;
  }

  /**
   * Deletes every expired row (a `begin` reclaims its own key anyway), {@link IDEMPOTENCY_PURGE_BATCH} rows a
   * statement, so a large backlog is several short transactions; run it now and then.
   * @returns how many rows were deleted, over all statements
   */
  async purgeExpired(): Promise<number> {
    let purged = 0;
    for (;;) {
      const deleted = affected(await this.#query("purge", [IDEMPOTENCY_PURGE_BATCH]));
      purged += deleted;
      if (deleted < IDEMPOTENCY_PURGE_BATCH) return purged;
    }
  }

  #query(statement: keyof Statements, values: unknown[]) {
    return run(this.#client, this.#sql[statement], values, this.#prepare);
  }
}
