/**
 * rest-webhooks/postgres: the one PostgreSQL convention every durable store of this library follows. One client
 * type ({@link SqlClient}: a `pg` Pool, Client or PoolClient, or PGlite), one {@link transaction} helper, one
 * migration API ({@link migrate}, {@link migrationSql}), tables named `"<schema>"."<table>"`, times as `timestamptz`.
 * `pg` and `@electric-sql/pglite` are optional peers: pass the client you already have.
 */
export { DEFAULT_SCHEMA } from "./identifier";
export { MIGRATIONS_TABLE, type MigrateOptions, type Migration, migrate, migrationSql } from "./migrate";
export { MigrationError, type MigrationErrorCode } from "./migration-error";
export { type OpenPgliteOptions, openPglite, type PgliteDatabase } from "./pglite";
export { PGLITE_LOCK_FILE, PgliteLockError, type PgliteLockErrorCode } from "./pglite-lock";
export { type RequestTransactionOptions, requestTransaction, transactionOf } from "./request-transaction";
export type { SqlClient, SqlDatabase, SqlPool, SqlResult, SqlTransactor } from "./sql-client";
export { epochMsOf, timestampOf } from "./sql-time";
export { StoreClosedError } from "./store-closed-error";
export { type TransactionOptions, transaction } from "./transaction";
