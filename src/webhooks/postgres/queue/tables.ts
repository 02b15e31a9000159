import type { Queryable } from "../../delivery/delivery-queue";

/** Where the webhook tables live. */
export interface WebhookTablesOptions {
  /** @default "public" */
  schema?: string;
  /** @default "webhook_" */
  tablePrefix?: string;
}

/** Quoted, schema-qualified table names. Internal. */
export interface WebhookTables {
  endpoints: string;
  deliveries: string;
  attempts: string;
  /** Unquoted prefix for index names. */
  indexPrefix: string;
  schema: string;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/** Resolves the table names; throws TypeError on an unsafe identifier (they are interpolated into SQL). */
export function webhookTables(options: WebhookTablesOptions = {}): WebhookTables {
  const schema = options.schema ?? "public";
  const prefix = options.tablePrefix ?? "webhook_";
  if (!IDENTIFIER.test(schema) || !(prefix === "" || IDENTIFIER.test(prefix))) {
    throw new TypeError("schema and tablePrefix must be lower-case SQL identifiers ([a-z_][a-z0-9_]*).");
  }
  return {
    endpoints: `"${schema}"."${prefix}endpoints"`,
    deliveries: `"${schema}"."${prefix}deliveries"`,
    attempts: `"${schema}"."${prefix}attempts"`,
    indexPrefix: prefix,
    schema,
  };
}

/**
 * The DDL of the webhook tables (endpoints, deliveries, attempt log), idempotent (`IF NOT EXISTS`). Times are epoch
 * milliseconds in `bigint` columns. Run it with your migration tool, or call {@link migrateWebhookQueue}.
 */
export function webhookQueueMigration(options: WebhookTablesOptions = {}): string {
  const t = webhookTables(options);
  const p = t.indexPrefix;
  return `
CREATE SCHEMA IF NOT EXISTS "${t.schema}";
CREATE TABLE IF NOT EXISTS ${t.endpoints} (
  id text PRIMARY KEY,
  url text NOT NULL,
  enabled_events text[] NOT NULL,
  secrets jsonb NOT NULL,
  status text NOT NULL CHECK (status IN ('enabled', 'disabled')),
  disabled_reason text,
  disabled_at bigint,
  description text NOT NULL DEFAULT '',
  metadata jsonb NOT NULL DEFAULT '{}',
  rate_limit double precision,
  failing_since bigint,
  created_at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS "${p}endpoints_events" ON ${t.endpoints} USING gin (enabled_events);
CREATE TABLE IF NOT EXISTS ${t.deliveries} (
  id text PRIMARY KEY,
  event_id text NOT NULL,
  event_type text NOT NULL,
  endpoint_id text NOT NULL,
  payload text NOT NULL,
  created_at bigint NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'failed', 'delivered', 'exhausted')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at bigint,
  last_attempt_at bigint,
  last_status integer,
  last_error_kind text,
  delivered_at bigint,
  lease_token text,
  lease_until bigint,
  UNIQUE (event_id, endpoint_id)
);
CREATE INDEX IF NOT EXISTS "${p}deliveries_due" ON ${t.deliveries} (next_attempt_at) WHERE status IN ('pending', 'failed');
CREATE INDEX IF NOT EXISTS "${p}deliveries_endpoint" ON ${t.deliveries} (endpoint_id, created_at DESC);
CREATE TABLE IF NOT EXISTS ${t.attempts} (
  seq bigserial PRIMARY KEY,
  delivery_id text NOT NULL,
  endpoint_id text NOT NULL,
  event_id text NOT NULL,
  attempt integer NOT NULL,
  started_at bigint NOT NULL,
  duration_ms integer NOT NULL,
  status integer,
  error_kind text,
  response text
);
CREATE INDEX IF NOT EXISTS "${p}attempts_endpoint" ON ${t.attempts} (endpoint_id, seq DESC);
`;
}

/** Creates the webhook tables if they are missing. */
export async function migrateWebhookQueue(client: Queryable, options: WebhookTablesOptions = {}): Promise<void> {
  await client.query(webhookQueueMigration(options));
}

/** A bigint column (pg returns it as a string) as a number, keeping null. */
export function num(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}
