import { schemaName, tableIn } from "../../postgres/identifier";
import type { Migration } from "../../postgres/migrate";

/** The table of GCRA state in its schema. */
export const RATE_LIMIT_TABLE = "rate_limits";

/** Where the rate-limit table lives. */
export interface RateLimitTableOptions {
  /** @default "public" */
  schema?: string;
}

/**
 * The rate-limit table's migrations: one row per key with its GCRA state (each limit's theoretical arrival time) and
 * the instant that state no longer limits anything (`expires_ms`; past it the row holds nothing and is purged).
 * `key` holds the SHA-256 of the key (base64url), not the key: rows written by earlier versions, keyed by the key
 * itself, are no longer read, and are purged once they expire.
 * Apply them with `migrate` from `rest-webhooks/postgres`, or take their SQL with `migrationSql`.
 * @example await migrate(pool, rateLimitMigrations({ schema: "app" }))
 */
export function rateLimitMigrations(options: RateLimitTableOptions = {}): Migration[] {
  const schema = schemaName(options.schema, "rateLimitMigrations");
  const t = tableIn(schema, RATE_LIMIT_TABLE);
  return [
    {
      id: "ratelimit@1",
      schema,
      statements: [
        `CREATE TABLE IF NOT EXISTS ${t} (
  key text PRIMARY KEY,
  set_id text NOT NULL,
  state float8[],
  expires_ms float8 NOT NULL
)`,
        `CREATE INDEX IF NOT EXISTS "${RATE_LIMIT_TABLE}_expires" ON ${t} (expires_ms)`,
      ],
    },
  ];
}
