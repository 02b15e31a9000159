/**
 * The PostgreSQL idempotency store (`pg` is an optional peer dependency; pass your own pool or client).
 */
export { IDEMPOTENCY_MIGRATION_SQL, migrate, migrationSql } from "./migration";
export { PostgresIdempotencyStore, type PostgresStoreOptions } from "./postgres-store";
export type { PgQuery, PgQueryable } from "./queryable";
