import { schemaName, tableIn } from "../../../postgres/identifier";
import type { Migration } from "../../../postgres/migrate";
import { epochMsOf, timestampOf } from "../../../postgres/sql-time";

/**
 * SQL of the PostgreSQL inbox. Times are `timestamptz` written from the processor's clock (epoch ms), so a fake
 * clock drives the database as well; the payload is `json`, which keeps the verified body's text as sent (jsonb
 * would reject `\u0000` and reorder keys), or `bytea` (`payload_bytes`) for a raw body the consumer did not parse.
 */

/** The inbox table in its schema. */
export const INBOX_TABLE = "webhook_inbox";

/** Where the inbox table lives: `"<schema>"."webhook_inbox"`. */
export interface InboxTableOptions {
  /** @default "public" */
  schema?: string;
}

/**
 * The inbox table's migrations. Apply them with `migrate` from `rest-webhooks/postgres`, or take their SQL with
 * `migrationSql` for your own migration tool.
 * @example await migrate(pool, inboxMigrations())
 */
export function inboxMigrations(options: InboxTableOptions = {}): Migration[] {
  const schema = schemaName(options.schema, "inboxMigrations");
  const t = tableIn(schema, INBOX_TABLE);
  return [
    {
      id: "inbox@1",
      schema,
      statements: [
        `CREATE TABLE IF NOT EXISTS ${t} (
  id text PRIMARY KEY,
  type text NOT NULL,
  payload json,
  scheme text NOT NULL,
  webhook_timestamp bigint,
  received_at timestamptz NOT NULL,
  state text NOT NULL CHECK (state IN ('pending', 'processing', 'done', 'failed', 'dead')),
  attempts integer NOT NULL DEFAULT 0,
  available_at timestamptz,
  lease_owner text,
  lease_token text,
  last_error jsonb,
  done_at timestamptz,
  updated_at timestamptz NOT NULL
)`,
        `CREATE INDEX IF NOT EXISTS "${INBOX_TABLE}_due" ON ${t} (available_at) WHERE state IN ('pending', 'failed', 'processing')`,
        `CREATE INDEX IF NOT EXISTS "${INBOX_TABLE}_dead" ON ${t} (updated_at) WHERE state = 'dead'`,
      ],
    },
    {
      // Payloads over ~2 KB are compressed into TOAST; lz4 costs about half of the default pglz's CPU per write
      // (bench/consumer, 16 KiB events). A server built without lz4 (PGlite), or older than PostgreSQL 14, keeps
      // its default: EXECUTE defers the statement, so the handler also catches the older servers' syntax error.
      id: "inbox@2",
      schema,
      statements: [
        `DO $$
BEGIN
  EXECUTE 'ALTER TABLE ${t.replaceAll("'", "''")} ALTER COLUMN payload SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported OR syntax_error THEN
  NULL;
END
$$`,
      ],
    },
    {
      // Purges (the processor's retainDoneMs) find the old done events by this index instead of reading the table.
      // On a large table, build it first with CREATE INDEX CONCURRENTLY under this name: the migration then skips it
      // rather than holding back inserts (acknowledgements) while it builds.
      id: "inbox@3",
      schema,
      statements: [`CREATE INDEX IF NOT EXISTS "${INBOX_TABLE}_done" ON ${t} (done_at) WHERE state = 'done'`],
    },
    {
      // A payload that is the raw body (the consumer's parse: "none") is kept as its bytes: the json column would
      // hold a serialised Uint8Array ({"0":123,…}) and give the handler that object back. A nullable column without a
      // default is added without rewriting the table.
      id: "inbox@4",
      schema,
      statements: [`ALTER TABLE ${t} ADD COLUMN IF NOT EXISTS payload_bytes bytea`],
    },
  ];
}

/** The most done events one purge statement deletes: a long purge runs as several short transactions. */
export const PURGE_BATCH = 10_000;

const RECORD_COLUMNS = (t: string) =>
  `${t}.id, ${t}.type, ${t}.payload, ${t}.payload_bytes, ${t}.scheme, ${t}.webhook_timestamp::float8 AS webhook_timestamp, ` +
  `${epochMsOf(`${t}.received_at`)} AS received_at, ${t}.state, ${t}.attempts, ` +
  `${epochMsOf(`${t}.available_at`)} AS available_at, ${t}.last_error, ${epochMsOf(`${t}.done_at`)} AS done_at`;

/** Parameters per row of {@link addStatement}. */
export const ADD_PARAMS = 7;

/**
 * The INSERT of `rows` new events, each row's values as their own parameters: `id, type, payload (JSON text),
 * scheme, webhook timestamp, received at (ms), payload bytes`. Not one array per column: measured with 16 KiB payloads, building
 * and parsing a `text[]` literal cost twice the CPU of the payloads as parameters, in Node and in PostgreSQL alike.
 * A batch holding one id twice inserts the first; RETURNING names the ids that were new.
 */
export function addStatement(schema: string, rows: number): string {
  const t = tableIn(schema, INBOX_TABLE);
  const values = Array.from({ length: rows }, (_, row) => {
    const $ = (column: number) => `$${row * ADD_PARAMS + column}`;
    return `(${$(1)}::text, ${$(2)}::text, ${$(3)}::json, ${$(4)}::text, ${$(5)}::bigint, ${$(6)}::float8, ${$(7)}::bytea)`;
  });
  return `INSERT INTO ${t} (id, type, payload, payload_bytes, scheme, webhook_timestamp, received_at, state, available_at, updated_at)
SELECT v.id, v.type, v.payload, v.bytes, v.scheme, v.ts, ${timestampOf("v.at")}, 'pending', ${timestampOf("v.at")}, ${timestampOf("v.at")}
FROM (VALUES ${values.join(", ")}) AS v(id, type, payload, scheme, ts, at, bytes)
ON CONFLICT (id) DO NOTHING
RETURNING id`;
}

/** The statements of the inbox in `schema`. */
export function inboxStatements(schema: string) {
  const t = tableIn(schema, INBOX_TABLE);
  const ms = timestampOf;
  return {
    // $1 now, $2 limit, $3 owner, $4 token, $5 lease ms. SKIP LOCKED: concurrent claimers take disjoint
    // rows, and a row whose handler transaction is still open is skipped even after its lease ran out.
    claim: `WITH due AS (
  SELECT id FROM ${t}
  WHERE state IN ('pending', 'failed', 'processing') AND available_at <= ${ms("$1")}
  ORDER BY available_at
  LIMIT $2
  FOR UPDATE SKIP LOCKED
)
UPDATE ${t} AS t SET state = 'processing', attempts = t.attempts + 1, lease_owner = $3, lease_token = $4,
  available_at = ${ms("($1::float8 + $5::float8)")}, updated_at = ${ms("$1")}
FROM due WHERE t.id = due.id
RETURNING ${RECORD_COLUMNS("t")}`,
    // $1 id, $2 token: lock the row for the handler's transaction, unless the claim was taken over.
    // A plain FOR UPDATE, not SKIP LOCKED: another processor's claim scan briefly locks rows it then
    // rejects on recheck, and skipping those would report our own valid claim as lost.
    hold: `SELECT 1 FROM ${t} WHERE id = $1 AND lease_token = $2 AND state = 'processing' FOR UPDATE`,
    // $1 id, $2 now
    done: `UPDATE ${t} SET state = 'done', done_at = ${ms("$2")}, available_at = NULL, lease_owner = NULL,
  lease_token = NULL, updated_at = ${ms("$2")} WHERE id = $1`,
    // $1 id, $2 token, $3 state, $4 retry at (ms) or null, $5 error, $6 now
    fail: `UPDATE ${t} SET state = $3, available_at = ${ms("$4")}, last_error = $5::jsonb, lease_owner = NULL,
  lease_token = NULL, updated_at = ${ms("$6")} WHERE id = $1 AND lease_token = $2 AND state = 'processing'`,
    get: `SELECT ${RECORD_COLUMNS(t)} FROM ${t} WHERE id = $1`,
    dead: `SELECT ${RECORD_COLUMNS(t)} FROM ${t} WHERE state = 'dead' ORDER BY updated_at, id LIMIT $1`,
    // $1 id, $2 now
    retryDead: `UPDATE ${t} SET state = 'pending', attempts = 0, available_at = ${ms("$2")}, updated_at = ${ms("$2")}
WHERE id = $1 AND state = 'dead'`,
    // $1 before (ms), $2 batch size. SKIP LOCKED: two purgers take disjoint rows, so a batch short of $2 means the rest
    // is another's to delete; without it, the one that lost rows to the other stopped short, and when both did, done
    // events stayed behind (the rate-limit store's purge does the same).
    purgeDone: `DELETE FROM ${t} WHERE id IN (
  SELECT id FROM ${t} WHERE state = 'done' AND done_at < ${ms("$1")} LIMIT $2 FOR UPDATE SKIP LOCKED
)`,
  };
}
