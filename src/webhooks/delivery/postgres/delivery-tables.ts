import { schemaName, tableIn } from "../../../postgres/identifier";
import type { Migration } from "../../../postgres/migrate";
import { rateLimitMigrations } from "../../../ratelimit/postgres/rate-limit-tables";
import { endpointChannel } from "./endpoint-notifications";

/**
 * When a delivery ended, as the retention dates it: recorded since migration delivery@7, else its last attempt (or
 * delivery, or creation). The expression of the "webhook_deliveries_ended" index, which the purge's must match.
 * Internal.
 */
export const ENDED = "coalesce(ended_at, delivered_at, last_attempt_at, created_at)";

/**
 * A delivery parked while its endpoint was disabled: the predicate of the "webhook_deliveries_parked" index, which
 * the list's must imply for the planner to use it. Internal.
 */
export const PARKED = "status = 'exhausted' AND last_error_kind = 'endpoint_disabled'";

/** Where the webhook tables live: `"<schema>"."webhook_endpoints"`, `…"webhook_deliveries"`, `…"webhook_attempts"`. */
export interface DeliveryTablesOptions {
  /** @default "public" */
  schema?: string;
}

/** The quoted table names in one schema. Internal. */
export interface DeliveryTables {
  readonly schema: string;
  readonly endpoints: string;
  readonly deliveries: string;
  readonly attempts: string;
  readonly circuits: string;
  readonly tenants: string;
}

/** Resolves the table names; a schema that is not a lower-case SQL identifier is a TypeError. */
export function deliveryTables(options: DeliveryTablesOptions = {}, what = "deliveryTables"): DeliveryTables {
  const schema = schemaName(options.schema, what);
  return {
    schema,
    endpoints: tableIn(schema, "webhook_endpoints"),
    deliveries: tableIn(schema, "webhook_deliveries"),
    attempts: tableIn(schema, "webhook_attempts"),
    circuits: tableIn(schema, "webhook_circuits"),
    tenants: tableIn(schema, "webhook_tenants"),
  };
}

/**
 * The migrations of the webhook tables (endpoints, deliveries, the attempt log). Apply them with `migrate` from
 * `rest-webhooks/postgres` (idempotent, recorded in a version table), or take their SQL with `migrationSql` for your
 * own migration tool. Times are `timestamptz`.
 * @example await migrate(pool, deliveryMigrations({ schema: "app" }))
 */
export function deliveryMigrations(options: DeliveryTablesOptions = {}): Migration[] {
  const t = deliveryTables(options, "deliveryMigrations");
  const notify = tableIn(t.schema, "webhook_endpoints_notify");
  return [
    {
      id: "delivery@1",
      schema: t.schema,
      statements: [
        `CREATE TABLE IF NOT EXISTS ${t.endpoints} (
  id text PRIMARY KEY,
  url text NOT NULL,
  enabled_events text[] NOT NULL,
  secrets jsonb NOT NULL,
  status text NOT NULL CHECK (status IN ('enabled', 'disabled')),
  disabled_reason text,
  disabled_at timestamptz,
  description text NOT NULL DEFAULT '',
  metadata jsonb NOT NULL DEFAULT '{}',
  rate_limit double precision,
  failing_since timestamptz,
  created_at timestamptz NOT NULL
)`,
        `CREATE INDEX IF NOT EXISTS "webhook_endpoints_events" ON ${t.endpoints} USING gin (enabled_events)`,
        `CREATE TABLE IF NOT EXISTS ${t.deliveries} (
  id text PRIMARY KEY,
  event_id text NOT NULL,
  event_type text NOT NULL,
  endpoint_id text NOT NULL,
  payload text NOT NULL,
  created_at timestamptz NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'failed', 'delivered', 'exhausted')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  last_attempt_at timestamptz,
  last_status integer,
  last_error_kind text,
  delivered_at timestamptz,
  lease_token text,
  lease_until timestamptz,
  UNIQUE (event_id, endpoint_id)
)`,
        `CREATE INDEX IF NOT EXISTS "webhook_deliveries_due" ON ${t.deliveries} (next_attempt_at) WHERE status IN ('pending', 'failed')`,
        `CREATE INDEX IF NOT EXISTS "webhook_deliveries_endpoint" ON ${t.deliveries} (endpoint_id, created_at DESC)`,
        `CREATE TABLE IF NOT EXISTS ${t.attempts} (
  seq bigserial PRIMARY KEY,
  delivery_id text NOT NULL,
  endpoint_id text NOT NULL,
  event_id text NOT NULL,
  attempt integer NOT NULL,
  started_at timestamptz NOT NULL,
  duration_ms integer NOT NULL,
  status integer,
  error_kind text,
  response text
)`,
        `CREATE INDEX IF NOT EXISTS "webhook_attempts_endpoint" ON ${t.attempts} (endpoint_id, seq DESC)`,
      ],
    },
    {
      id: "delivery@2",
      schema: t.schema,
      statements: [
        // Fair claims: the next endpoint with due work, and its oldest due deliveries, straight from the index.
        `CREATE INDEX IF NOT EXISTS "webhook_deliveries_endpoint_due" ON ${t.deliveries} (endpoint_id, next_attempt_at) WHERE status IN ('pending', 'failed')`,
      ],
    },
    {
      // The per-endpoint rate limits every worker on the queue shares (`rest-webhooks/ratelimit/postgres`'s table).
      id: "delivery@3",
      schema: t.schema,
      statements: rateLimitMigrations({ schema: t.schema }).flatMap((migration) => migration.statements),
    },
    {
      // The publishing span's W3C traceparent, linked from every attempt (docs/observability.md).
      id: "delivery@4",
      schema: t.schema,
      statements: [`ALTER TABLE ${t.deliveries} ADD COLUMN IF NOT EXISTS traceparent text`],
    },
    {
      // The circuit breaker every worker shares: endpoints whose circuit is open, and the holder of the probe (epoch ms).
      id: "delivery@5",
      schema: t.schema,
      statements: [
        `CREATE TABLE IF NOT EXISTS ${t.circuits} (
  endpoint_id text PRIMARY KEY,
  open_until float8 NOT NULL,
  probe_until float8
)`,
      ],
    },
    {
      // Room on every page for a claim's new row version beside the old one: claims and renewals write only the lease
      // columns, which no index holds, so with room they are HOT updates (no index entries, one page in the WAL).
      // Pages written before this keep their fill until they are rewritten.
      id: "delivery@6",
      schema: t.schema,
      statements: [`ALTER TABLE ${t.deliveries} SET (fillfactor = 80)`],
    },
    {
      // When a delivery ended (delivered or exhausted), on the queue's clock: the retention (retainTerminalMs) counts
      // from it. A delivery parked when its endpoint was disabled ended then, not at its last attempt. Rows that ended
      // before this migration have none, and count from their last attempt.
      id: "delivery@7",
      schema: t.schema,
      statements: [`ALTER TABLE ${t.deliveries} ADD COLUMN IF NOT EXISTS ended_at timestamptz`],
    },
    {
      // One delivery's attempts (the endpoint API's delivery detail) straight from an index: through the endpoint's
      // index alone, an old delivery of a busy endpoint meant reading back through all of the endpoint's log.
      id: "delivery@8",
      schema: t.schema,
      statements: [`CREATE INDEX IF NOT EXISTS "webhook_attempts_delivery" ON ${t.attempts} (delivery_id, seq DESC)`],
    },
    {
      // The tenant owning each endpoint (NULL: the operator's). A tenant's publish and list read its own endpoints
      // straight from the index, not every endpoint subscribed to the type. Endpoints stored before have none.
      // webhook_tenants counts each tenant's endpoints, so a creation checks the limit on a row it locks: a count of
      // the endpoints themselves would be read from a snapshot that misses a concurrent creation.
      id: "delivery@9",
      schema: t.schema,
      statements: [
        `ALTER TABLE ${t.endpoints} ADD COLUMN IF NOT EXISTS tenant text`,
        `ALTER TABLE ${t.endpoints} ADD COLUMN IF NOT EXISTS all_tenants boolean NOT NULL DEFAULT false`,
        `CREATE INDEX IF NOT EXISTS "webhook_endpoints_tenant" ON ${t.endpoints} (tenant, created_at, id)`,
        // The operator's endpoints that receive every tenant's events: found beside each tenant's own at each publish.
        `CREATE INDEX IF NOT EXISTS "webhook_endpoints_all_tenants" ON ${t.endpoints} (created_at, id) WHERE all_tenants`,
        `CREATE TABLE IF NOT EXISTS ${t.tenants} (
  tenant text PRIMARY KEY,
  endpoints integer NOT NULL CHECK (endpoints >= 0)
)`,
      ],
    },
    {
      // Header fields an endpoint adds to every request to it; endpoints stored before add none.
      id: "delivery@10",
      schema: t.schema,
      statements: [`ALTER TABLE ${t.endpoints} ADD COLUMN IF NOT EXISTS headers jsonb NOT NULL DEFAULT '{}'`],
    },
    {
      // The retention reads what expired first straight from these: the ended deliveries by when they ended (rows from
      // before delivery@7 by their last attempt, as the purge dates them), the log by when each attempt started. By the
      // oldest rows of an endpoint or of the log's sequence instead, a backlog of scheduled deliveries or one line
      // dated ahead stood in front of everything expired behind it. Neither index holds a lease column, so claims and
      // renewals stay HOT updates.
      id: "delivery@11",
      schema: t.schema,
      statements: [
        `CREATE INDEX IF NOT EXISTS "webhook_deliveries_ended" ON ${t.deliveries} ((${ENDED})) WHERE status IN ('delivered', 'exhausted')`,
        `CREATE INDEX IF NOT EXISTS "webhook_attempts_started" ON ${t.attempts} (started_at)`,
      ],
    },
    {
      // The W3C tracestate published beside the traceparent (docs/observability.md); deliveries stored before have none.
      id: "delivery@12",
      schema: t.schema,
      statements: [`ALTER TABLE ${t.deliveries} ADD COLUMN IF NOT EXISTS tracestate text`],
    },
    {
      // An endpoint's deliveries parked while it was disabled, in the list's order: re-enabling and a replay with
      // `status: "parked"` read a page of them straight from here. Through the endpoint's index, each page first
      // stepped over every delivery exhausted otherwise since. Partial, so a claim or an attempt writes no entry.
      id: "delivery@13",
      schema: t.schema,
      statements: [
        `CREATE INDEX IF NOT EXISTS "webhook_deliveries_parked" ON ${t.deliveries}
  (endpoint_id, created_at DESC, id DESC) WHERE ${PARKED}`,
      ],
    },
    {
      // An event id is unique within the tenant it was published for (`tenant`, '' for the operator's events), no
      // longer across tenants: another tenant's event of the same id is another event. Rows stored before have none
      // (NULL), and hold their id in every scope, as they did. Only adds: a release before it runs on these tables.
      // On a large table, build the index first without blocking writes (docs/webhooks-providers.md).
      id: "delivery@14",
      schema: t.schema,
      statements: [
        `ALTER TABLE ${t.deliveries} ADD COLUMN IF NOT EXISTS tenant text`,
        `CREATE UNIQUE INDEX IF NOT EXISTS "webhook_deliveries_event" ON ${t.deliveries} (event_id, tenant, endpoint_id)`,
      ],
    },
    {
      // Drops delivery@1's key, one delivery per event id and endpoint whatever the tenant: while it stands, an
      // endpoint with allTenants gets only the first tenant's event of a shared id. Releases before delivery@14
      // publish with ON CONFLICT on it and fail without it (42P10): migrate past it once none of them runs.
      id: "delivery@15",
      schema: t.schema,
      statements: [
        `ALTER TABLE ${t.deliveries} DROP CONSTRAINT IF EXISTS "webhook_deliveries_event_id_endpoint_id_key"`,
      ],
    },
    {
      // The endpoint store's watch across processes (endpoint-notifications.ts): each endpoint row inserted, changed
      // or deleted notifies its id, at commit (PostgreSQL, NOTIFY: "not delivered until and unless the transaction
      // is committed"), whoever wrote it. A write of failing_since alone (the health check's) does not: no watcher
      // caches on it. A trigger rather than the store's statements, so that an operator's hand-written SQL counts too.
      id: "delivery@16",
      schema: t.schema,
      statements: [
        `CREATE OR REPLACE FUNCTION ${notify}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('${endpointChannel(t.schema)}', OLD.id);
  ELSE
    PERFORM pg_notify('${endpointChannel(t.schema)}', NEW.id);
  END IF;
  RETURN NULL;
END
$$`,
        `DROP TRIGGER IF EXISTS "webhook_endpoints_written" ON ${t.endpoints}`,
        `CREATE TRIGGER "webhook_endpoints_written" AFTER INSERT OR DELETE ON ${t.endpoints}
  FOR EACH ROW EXECUTE FUNCTION ${notify}()`,
        `DROP TRIGGER IF EXISTS "webhook_endpoints_changed" ON ${t.endpoints}`,
        `CREATE TRIGGER "webhook_endpoints_changed" AFTER UPDATE ON ${t.endpoints} FOR EACH ROW
  WHEN ((to_jsonb(OLD) - 'failing_since') IS DISTINCT FROM (to_jsonb(NEW) - 'failing_since'))
  EXECUTE FUNCTION ${notify}()`,
      ],
    },
  ];
}
