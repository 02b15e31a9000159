import { schemaName, tableIn } from "../../postgres/identifier";
import type { Migration } from "../../postgres/migrate";

/** The table of idempotency records in its schema. */
export const IDEMPOTENCY_TABLE = "idempotency_keys";

/** Where the idempotency table lives. */
export interface IdempotencyTableOptions {
  /** @default "public" */
  schema?: string;
}

/**
 * The idempotency table's migrations: one row per scoped key, in progress while `status` is null (`lease_token`
 * fences late writers), completed once it is set. `expires_at` is the lease expiry, then the response expiry; an
 * expired row is reclaimed by the next `begin` on its key or by `purgeExpired()` (the index serves the latter).
 * Apply them with `migrate` from `rest-webhooks/postgres`, or take their SQL with `migrationSql`.
 * @example await migrate(pool, idempotencyMigrations({ schema: "app" }))
 */
export function idempotencyMigrations(options: IdempotencyTableOptions = {}): Migration[] {
  const schema = schemaName(options.schema, "idempotencyMigrations");
  const t = tableIn(schema, IDEMPOTENCY_TABLE);
  return [
    {
      id: "idempotency@1",
      schema,
      statements: [
        `CREATE TABLE IF NOT EXISTS ${t} (
  key text PRIMARY KEY,
  fingerprint text NOT NULL,
  lease_token text,
  status integer,
  headers jsonb,
  body bytea,
  expires_at timestamptz NOT NULL
)`,
        `CREATE INDEX IF NOT EXISTS "${IDEMPOTENCY_TABLE}_expires_at" ON ${t} (expires_at)`,
      ],
    },
  ];
}
