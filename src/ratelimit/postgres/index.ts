/**
 * The PostgreSQL store for `rest-webhooks/ratelimit`: GCRA state in one table that every process on the database
 * shares (runs on `pg` and on PGlite).
 */
export { RateLimitError, type RateLimitErrorCode } from "../errors";
export { createPostgresRateLimitStore, type PostgresRateLimitStoreOptions } from "./postgres-store";
export { RATE_LIMIT_TABLE, type RateLimitTableOptions, rateLimitMigrations } from "./rate-limit-tables";
