import type { PgQueryable } from "./queryable";
import { DEFAULT_TABLE, tableName } from "./table-name";

/**
 * The DDL of the idempotency table named `table`. One row per scoped key: in progress while
 * `status` is null (`lease_token` fences late writers), completed once it is set. `expires_at`
 * is the lease expiry, then the response expiry; an expired row is reclaimed by the next `begin`
 * on its key or by `purgeExpired()` (the index serves the latter).
 */
export function migrationSql(table: string = DEFAULT_TABLE): string {
  const name = tableName(table);
  return `CREATE TABLE IF NOT EXISTS ${name.sql} (
  key text PRIMARY KEY,
  fingerprint text NOT NULL,
  lease_token text,
  status integer,
  headers jsonb,
  body bytea,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS "${name.bare}_expires_at_idx" ON ${name.sql} (expires_at);
`;
}

/** The migration for the default table `idempotency_keys`. */
export const IDEMPOTENCY_MIGRATION_SQL: string = migrationSql();

/**
 * Creates the table (and its index) if it does not exist.
 * @example await migrate(pool, { table: "idempotency_keys" })
 */
export async function migrate(client: PgQueryable, options: { table?: string } = {}): Promise<void> {
  await client.query({ text: migrationSql(options.table) });
}
