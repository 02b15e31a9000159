/**
 * The PostgreSQL idempotency store (`pg` or PGlite, an optional peer: pass your own pool or client). Create its
 * table with `migrate(pool, idempotencyMigrations())` from `rest-webhooks/postgres`.
 */
export { IDEMPOTENCY_TABLE, type IdempotencyTableOptions, idempotencyMigrations } from "./migration";
export { PostgresIdempotencyStore, type PostgresStoreOptions } from "./postgres-store";
