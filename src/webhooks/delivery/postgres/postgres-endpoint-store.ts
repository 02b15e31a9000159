import { nonNegativeInteger } from "../../../options/number-option";
import { assertSqlClient, type SqlClient } from "../../../postgres/sql-client";
import { timestampOf } from "../../../postgres/sql-time";
import { affected } from "../../../postgres/statement";
import { patternsMatching } from "../../event-pattern/event-pattern";
import type { EndpointSecret } from "../endpoint";
import type { EndpointPatch, EndpointStore } from "../endpoint-store";
import { ENDPOINT_COLUMNS, toEndpoint } from "./delivery-rows";
import { type DeliveryTablesOptions, deliveryTables } from "./delivery-tables";

/** Options of {@link createPostgresEndpointStore}. */
export interface PostgresEndpointStoreOptions extends DeliveryTablesOptions {
  /** A `pg` Pool (or Client), or PGlite: see `SqlClient` in `rest-webhooks/postgres`. */
  client: SqlClient;
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
  rateLimit: ["rate_limit", (p) => p, (v: number | null) => v],
  failingSince: ["failing_since", timestampOf, (v: number | null) => v],
};

/**
 * The PostgreSQL {@link EndpointStore}; create its tables with `migrate(pool, deliveryMigrations())`.
 * @example const endpoints = createPostgresEndpointStore({ client: pool });
 */
export function createPostgresEndpointStore(options: PostgresEndpointStoreOptions): EndpointStore {
  const { client } = options;
  assertSqlClient(client, "createPostgresEndpointStore");
  const { endpoints: E } = deliveryTables(options, "createPostgresEndpointStore");
  return {
    async create(e) {
      await client.query(
        `INSERT INTO ${E} (id, url, enabled_events, secrets, status, disabled_reason, disabled_at, description,
           metadata, rate_limit, failing_since, created_at)
         VALUES ($1, $2, $3, $4::jsonb, $5, $6, ${timestampOf("$7")}, $8, $9::jsonb, $10, ${timestampOf("$11")},
           ${timestampOf("$12")})`,
        [
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
        ],
      );
    },
    async get(id) {
      const { rows } = await client.query(`SELECT ${ENDPOINT_COLUMNS} FROM ${E} WHERE id = $1`, [id]);
      return rows[0] === undefined ? undefined : toEndpoint(rows[0]);
    },
    async list({ limit, startingAfter }) {
      nonNegativeInteger("EndpointStore.list", "limit", limit);
      const { rows } =
        startingAfter === undefined
          ? await client.query(`SELECT ${ENDPOINT_COLUMNS} FROM ${E} ORDER BY created_at, id LIMIT $1`, [limit])
          : await client.query(
              `SELECT ${ENDPOINT_COLUMNS} FROM ${E} WHERE (created_at, id) > (SELECT created_at, id FROM ${E} WHERE id = $2)
               ORDER BY created_at, id LIMIT $1`,
              [limit, startingAfter],
            );
      return rows.map(toEndpoint);
    },
    async update(id, patch) {
      const sets: string[] = [];
      const values: unknown[] = [id];
      for (const [key, value] of Object.entries(patch)) {
        // Own keys only: "constructor" or "toString" in a patch names no column.
        if (value === undefined || !Object.hasOwn(COLUMNS, key)) continue;
        const column = COLUMNS[key as keyof EndpointPatch];
        values.push((column[2] as (v: unknown) => unknown)(value));
        sets.push(`${column[0]} = ${column[1](`$${values.length}`)}`);
      }
      const { rows } =
        sets.length === 0
          ? await client.query(`SELECT ${ENDPOINT_COLUMNS} FROM ${E} WHERE id = $1`, values)
          : await client.query(
              `UPDATE ${E} SET ${sets.join(", ")} WHERE id = $1 RETURNING ${ENDPOINT_COLUMNS}`,
              values,
            );
      return rows[0] === undefined ? undefined : toEndpoint(rows[0]);
    },
    async updateSecrets(id, next) {
      // Compare and set: the write lands only on the secrets `next` saw (jsonb equality, compared with the exact text
      // read), else it reads again. Each miss means another write of the secrets landed, so the writers progress.
      for (;;) {
        const read = await client.query(`SELECT secrets::text AS seen, ${ENDPOINT_COLUMNS} FROM ${E} WHERE id = $1`, [
          id,
        ]);
        const row = read.rows[0] as { seen: string } | undefined;
        if (row === undefined) return undefined;
        const secrets = next(toEndpoint(row).secrets);
        const { rows } = await client.query(
          `UPDATE ${E} SET secrets = $2::jsonb WHERE id = $1 AND secrets = $3::jsonb RETURNING ${ENDPOINT_COLUMNS}`,
          [id, JSON.stringify(secrets), row.seen],
        );
        if (rows[0] !== undefined) return toEndpoint(rows[0]);
      }
    },
    async delete(id) {
      return affected(await client.query(`DELETE FROM ${E} WHERE id = $1`, [id])) > 0;
    },
    async subscribed(eventType) {
      const { rows } = await client.query(
        `SELECT ${ENDPOINT_COLUMNS} FROM ${E} WHERE status = 'enabled' AND enabled_events && $1::text[]
         ORDER BY created_at, id`,
        [patternsMatching(eventType)],
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
}
