/**
 * rest-webhooks/webhooks/consumer/postgres: the durable inbox on PostgreSQL or PGlite. Create its table with
 * `migrate(pool, inboxMigrations())` from `rest-webhooks/postgres`.
 */
export { type InboxTableOptions, inboxMigrations } from "./inbox-sql";
export {
  createPostgresInbox,
  PostgresInbox,
  type PostgresInboxContext,
  type PostgresInboxOptions,
} from "./postgres-inbox";
