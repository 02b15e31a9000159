import { nonNegativeInteger } from "../../../options/number-option";
import { assertSqlClient, type SqlClient } from "../../../postgres/sql-client";
import { timestampOf } from "../../../postgres/sql-time";
import { affected } from "../../../postgres/statement";
import { patternsMatching } from "../../event-pattern/event-pattern";
import type { EndpointSecret } from "../endpoint";
import type { EndpointPatch, EndpointStore, EndpointWatchEvents } from "../endpoint-store";
import { checkEndpointText } from "../endpoint-text";
import { EndpointWatchers } from "../endpoint-watchers";
import { checkAllTenants, checkTenant, maxPerTenant } from "../tenant";
import { type ListenOptions, listenOnChannel, listenOptions } from "./channel-listener";
import { ENDPOINT_COLUMNS, toEndpoint } from "./delivery-rows";
import { type DeliveryTablesOptions, deliveryTables } from "./delivery-tables";
import { endpointChannel } from "./endpoint-notifications";
import { ownedBy, receivingFor } from "./owned-by";

/** Options of {@link createPostgresEndpointStore}. */
export interface PostgresEndpointStoreOptions extends DeliveryTablesOptions {
  /** A `pg` Pool (or Client), or PGlite: see `SqlClient` in `rest-webhooks/postgres`. */
  client: SqlClient;
  /**
   * Whether `watch` also hears the endpoints that other processes (or other store objects, or SQL written by hand)
   * change: while anything watches, the store LISTENs on the channel that migration `delivery@16`'s triggers notify
   * at each commit that inserts, changes or deletes an endpoint row. On a `pg` Pool that is the pool's one listening
   * connection, opened with its settings outside the pool (it takes none of the pool's clients) and shared with the
   * delivery queue's `listen` and every other store object on the pool; PGlite listens on itself;
   * a single `pg` Client is not listened on. A lost connection is opened again after `retryMs` (doubling, at most
   * 30 s) and reported to `onError`; what changed meanwhile is left to the watcher's own time limit. `false`: this
   * object's own writes only.
   * @default true
   */
  listen?: boolean | ListenOptions | undefined;
}

// How each patchable field is written: its column, and the SQL of its value from a parameter.
const COLUMNS: Record<
  keyof EndpointPatch,
  [column: string, value: (param: string) => string, encode: (v: never) => unknown]
> = {
  url: ["url", (p) => p, (v: string) => v],
  enabledEvents: ["enabled_events", (p) => `${p}::text[]`, (v: string[]) => v],
  secrets: ["secrets", (p) => `${p}::jsonb`, (v: EndpointSecret[]) => JSON.stringify(v)],
  status: ["status", (p) => p, (v: string) => v],
  disabledReason: ["disabled_reason", (p) => p, (v: string | null) => v],
  disabledAt: ["disabled_at", timestampOf, (v: number | null) => v],
  description: ["description", (p) => p, (v: string) => v],
  metadata: ["metadata", (p) => `${p}::jsonb`, (v: Record<string, string>) => JSON.stringify(v)],
  headers: ["headers", (p) => `${p}::jsonb`, (v: Record<string, string>) => JSON.stringify(v)],
  rateLimit: ["rate_limit", (p) => p, (v: number | null) => v],
  failingSince: ["failing_since", timestampOf, (v: number | null) => v],
};

// The row `readVersion` read, as it was then ($1 its id, $2 and $3 its xmin and ctid): no other write landed since.
const SAME_VERSION = "id = $1 AND xmin = $2::xid AND ctid = $3::tid";

/**
 * The SET list of a patch, each value pushed onto `values` as the parameter it names: an `undefined` field is left as
 * it is, and a key that names no column is ignored (own keys only: "constructor" or "toString" names none).
 */
function assignments(patch: EndpointPatch, values: unknown[]): string[] {
  const sets: string[] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined || !Object.hasOwn(COLUMNS, key)) continue;
    const column = COLUMNS[key as keyof EndpointPatch];
    values.push((column[2] as (v: unknown) => unknown)(value));
    sets.push(`${column[0]} = ${column[1](`$${values.length}`)}`);
  }
  return sets;
}

/**
 * The PostgreSQL {@link EndpointStore}; create its tables with `migrate(pool, deliveryMigrations())`.
 * @example const endpoints = createPostgresEndpointStore({ client: pool });
 */
export function createPostgresEndpointStore(options: PostgresEndpointStoreOptions): EndpointStore {
  const { client } = options;
  assertSqlClient(client, "createPostgresEndpointStore");
  const { schema, endpoints: E, tenants: T } = deliveryTables(options, "createPostgresEndpointStore");
  const listen = listenOptions("createPostgresEndpointStore", options.listen);
  // The endpoint and the version of its row: xmin alone stays the same across the updates of one transaction (a
  // client that is a transaction, written twice in it), ctid does not; together they name one version.
  const readVersion = async (id: string) => {
    const { rows } = await client.query(
      `SELECT xmin::text AS seen_xmin, ctid::text AS seen_ctid, ${ENDPOINT_COLUMNS} FROM ${E} WHERE id = $1`,
      [id],
    );
    const row = rows[0] as { seen_xmin: string; seen_ctid: string } | undefined;
    return row === undefined ? undefined : { endpoint: toEndpoint(row), xmin: row.seen_xmin, ctid: row.seen_ctid };
  };
  // Deletes the endpoint `where` names, and its place in its tenant's count, in one statement.
  const deleteWhere = async (where: string, values: unknown[]): Promise<boolean> => {
    const { rows } = await client.query(
      `WITH gone AS (DELETE FROM ${E} WHERE ${where} RETURNING tenant),
         -- Never below 0: an endpoint written by hand (not through create) was never counted.
         freed AS (UPDATE ${T} AS t SET endpoints = greatest(t.endpoints - 1, 0) FROM gone WHERE t.tenant = gone.tenant)
       SELECT count(*)::int AS deleted FROM gone`,
      values,
    );
    return (rows[0] as { deleted: number } | undefined)?.deleted === 1;
  };
  const store: EndpointStore = {
    async create(e, createOptions) {
      const tenant = checkTenant("EndpointStore.create", e.tenant ?? undefined) ?? null;
      checkAllTenants(e);
      checkEndpointText("EndpointStore.create", e);
      const max = maxPerTenant("EndpointStore.create", createOptions?.maxPerTenant);
      const values = [
        e.id,
        e.url,
        e.enabledEvents,
        JSON.stringify(e.secrets),
        e.status,
        e.disabledReason,
        e.disabledAt,
        e.description,
        JSON.stringify(e.metadata),
        e.rateLimit,
        e.failingSince,
        e.createdAt,
        tenant,
        e.allTenants === true,
        // An endpoint built by hand before endpoint headers existed has none.
        JSON.stringify(e.headers ?? {}),
      ];
      const columns = `id, url, enabled_events, secrets, status, disabled_reason, disabled_at, description, metadata,
        rate_limit, failing_since, created_at, tenant, all_tenants, headers`;
      const row = `$1, $2, $3::text[], $4::jsonb, $5, $6, ${timestampOf("$7")}, $8, $9::jsonb, $10::float8,
        ${timestampOf("$11")}, ${timestampOf("$12")}, $13, $14::boolean, $15::jsonb`;
      if (tenant === null) {
        await client.query(`INSERT INTO ${E} (${columns}) VALUES (${row})`, values);
        return true;
      }
      // The tenant's count, taken and raised on its row (locked; a concurrent creation waits, then sees the count
      // raised), and the endpoint, in one statement: both are written or neither.
      const result = await client.query(
        `WITH seat AS (
           INSERT INTO ${T} AS t (tenant, endpoints) VALUES ($13, 1)
           ON CONFLICT (tenant) DO UPDATE SET endpoints = t.endpoints + 1 WHERE $16::bigint IS NULL OR t.endpoints < $16
           RETURNING 1
         )
         INSERT INTO ${E} (${columns}) SELECT ${row} FROM seat`,
        [...values, Number.isFinite(max) ? max : null],
      );
      return affected(result) > 0;
    },
    async get(id) {
      const { rows } = await client.query(`SELECT ${ENDPOINT_COLUMNS} FROM ${E} WHERE id = $1`, [id]);
      return rows[0] === undefined ? undefined : toEndpoint(rows[0]);
    },
    async list({ limit, startingAfter, tenant }) {
      nonNegativeInteger("EndpointStore.list", "limit", limit);
      const values: unknown[] = [limit];
      const owned = tenant === undefined ? [] : [ownedBy(tenant, values)];
      const conditions = [...owned];
      if (startingAfter !== undefined) {
        // A cursor of another tenant names none of this tenant's endpoints: an empty page, as for a deleted one.
        const cursor = [`id = $${values.push(startingAfter)}`, ...owned].join(" AND ");
        conditions.push(`(created_at, id) > (SELECT created_at, id FROM ${E} WHERE ${cursor})`);
      }
      const where = conditions.length === 0 ? "" : `WHERE ${conditions.join(" AND ")}`;
      const { rows } = await client.query(
        `SELECT ${ENDPOINT_COLUMNS} FROM ${E} ${where} ORDER BY created_at, id LIMIT $1`,
        values,
      );
      return rows.map(toEndpoint);
    },
    async update(id, patch) {
      checkEndpointText("EndpointStore.update", patch);
      const values: unknown[] = [id];
      const sets = assignments(patch, values);
      const { rows } =
        sets.length === 0
          ? await client.query(`SELECT ${ENDPOINT_COLUMNS} FROM ${E} WHERE id = $1`, values)
          : await client.query(
              `UPDATE ${E} SET ${sets.join(", ")} WHERE id = $1 RETURNING ${ENDPOINT_COLUMNS}`,
              values,
            );
      return rows[0] === undefined ? undefined : toEndpoint(rows[0]);
    },
    async modify(id, next) {
      // Optimistic compare and set on the row version `next` saw, else read again: each miss means another write of
      // the endpoint landed, so the writers progress.
      for (;;) {
        const read = await readVersion(id);
        if (read === undefined) return undefined;
        const values: unknown[] = [id, read.xmin, read.ctid];
        const patch = next(read.endpoint);
        checkEndpointText("EndpointStore.modify", patch);
        const sets = assignments(patch, values);
        if (sets.length === 0) return read.endpoint;
        const { rows } = await client.query(
          `UPDATE ${E} SET ${sets.join(", ")} WHERE ${SAME_VERSION} RETURNING ${ENDPOINT_COLUMNS}`,
          values,
        );
        if (rows[0] !== undefined) return toEndpoint(rows[0]);
      }
    },
    delete: (id) => deleteWhere("id = $1", [id]),
    async deleteChecked(id, check) {
      // As modify: compare and delete on the row version `check` saw, else read again and check what landed.
      for (;;) {
        const read = await readVersion(id);
        if (read === undefined) return false;
        check(read.endpoint);
        if (await deleteWhere(SAME_VERSION, [id, read.xmin, read.ctid])) return true;
      }
    },
    async subscribed(eventType, tenant) {
      const values: unknown[] = [patternsMatching(eventType)];
      const { rows } = await client.query(
        `SELECT ${ENDPOINT_COLUMNS} FROM ${E} WHERE status = 'enabled' AND enabled_events && $1::text[]
           AND ${receivingFor(tenant, values)}
         ORDER BY created_at, id`,
        values,
      );
      return rows.map(toEndpoint);
    },
    async recordOutcome(id, success, now) {
      const { rows } = await client.query(
        success
          ? `UPDATE ${E} SET failing_since = NULL WHERE id = $1 RETURNING ${ENDPOINT_COLUMNS}`
          : `UPDATE ${E} SET failing_since = COALESCE(failing_since, ${timestampOf("$2")}) WHERE id = $1
             RETURNING ${ENDPOINT_COLUMNS}`,
        success ? [id] : [id, now],
      );
      return rows[0] === undefined ? undefined : toEndpoint(rows[0]).failingSince;
    },
  };
  // EndpointStore.watch: this object's own writes, told at once when done; every call that found its endpoint, an
  // update of equal values or an empty patch included (the row is not compared).
  const watchers = new EndpointWatchers();
  const told = <T>(id: string, done: T): T => {
    if (done !== undefined && done !== false) watchers.changed(id);
    return done;
  };
  // EndpointStore.watch, across processes: one LISTEN for all of this object's watches, while there are any.
  let unlisten: (() => void) | undefined;
  const lost = (error: Error) => {
    try {
      listen?.onError?.(error);
    } catch {
      // Ignored, as a watch's throw is: the store reconnects all the same, and the watches are still told.
    }
    watchers.lost(error);
  };
  const watch = (listener: (endpointId: string) => void, events?: EndpointWatchEvents): (() => void) => {
    const stop = watchers.watch(listener, events);
    if (watchers.count === 1 && listen !== undefined) {
      const options = { retryMs: listen.retryMs, onError: lost, onResumed: () => watchers.resumed() };
      unlisten = listenOnChannel(client, endpointChannel(schema), (id) => watchers.changed(id), options);
    }
    return () => {
      stop();
      if (watchers.count === 0) {
        unlisten?.();
        unlisten = undefined;
      }
    };
  };
  return {
    ...store,
    create: async (endpoint, createOptions) => told(endpoint.id, await store.create(endpoint, createOptions)),
    update: async (id, patch) => told(id, await store.update(id, patch)),
    modify: async (id, next) => told(id, await store.modify(id, next)),
    delete: async (id) => told(id, await store.delete(id)),
    deleteChecked: async (id, check) => told(id, await store.deleteChecked(id, check)),
    watch,
  };
}
