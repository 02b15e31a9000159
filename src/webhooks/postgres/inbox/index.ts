export {
  createPostgresInbox,
  PostgresInbox,
  type PostgresInboxContext,
  type PostgresInboxOptions,
} from "./postgres-inbox";
