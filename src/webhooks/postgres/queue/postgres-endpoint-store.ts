import type { Queryable } from "../../delivery/delivery-queue";
import type { EndpointSecret, WebhookEndpoint } from "../../delivery/endpoint";
import type { EndpointPatch, EndpointStore } from "../../delivery/endpoint-store";
import { patternsMatching } from "../../delivery/event-type";
import { num, type WebhookTablesOptions, webhookTables } from "./tables";

/** Options of {@link createPostgresEndpointStore}. */
export interface PostgresEndpointStoreOptions extends WebhookTablesOptions {
  /** A `pg` Pool (or any client with `query`). */
  pool: Queryable;
}

type Row = Record<string, unknown>;

function toEndpoint(row: Row): WebhookEndpoint {
  return {
    id: row.id as string,
    url: row.url as string,
    enabledEvents: row.enabled_events as string[],
    secrets: row.secrets as EndpointSecret[],
    status: row.status as WebhookEndpoint["status"],
    disabledReason: (row.disabled_reason as WebhookEndpoint["disabledReason"]) ?? null,
    disabledAt: num(row.disabled_at),
    description: row.description as string,
    metadata: row.metadata as Record<string, string>,
    rateLimit: row.rate_limit === null ? null : Number(row.rate_limit),
    failingSince: num(row.failing_since),
    createdAt: Number(row.created_at),
  };
}

const COLUMNS: Record<keyof EndpointPatch, [column: string, encode: (value: never) => unknown]> = {
  url: ["url", (v: string) => v],
  enabledEvents: ["enabled_events", (v: string[]) => v],
  secrets: ["secrets", (v: EndpointSecret[]) => JSON.stringify(v)],
  status: ["status", (v: string) => v],
  disabledReason: ["disabled_reason", (v: string | null) => v],
  disabledAt: ["disabled_at", (v: number | null) => v],
  description: ["description", (v: string) => v],
  metadata: ["metadata", (v: Record<string, string>) => JSON.stringify(v)],
  rateLimit: ["rate_limit", (v: number | null) => v],
  failingSince: ["failing_since", (v: number | null) => v],
};

/**
 * The PostgreSQL {@link EndpointStore}; run {@link migrateWebhookQueue} first.
 * @example const endpoints = createPostgresEndpointStore({ pool });
 */
export function createPostgresEndpointStore(options: PostgresEndpointStoreOptions): EndpointStore {
  const { pool } = options;
  const { endpoints: E } = webhookTables(options);
  return {
    async create(e) {
      await pool.query(
        `INSERT INTO ${E} (id, url, enabled_events, secrets, status, disabled_reason, disabled_at, description,
           metadata, rate_limit, failing_since, created_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)`,
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
      const { rows } = await pool.query(`SELECT * FROM ${E} WHERE id = $1`, [id]);
      return rows[0] === undefined ? undefined : toEndpoint(rows[0] as Row);
    },
    async list({ limit, startingAfter }) {
      const { rows } =
        startingAfter === undefined
          ? await pool.query(`SELECT * FROM ${E} ORDER BY created_at, id LIMIT $1`, [limit])
          : await pool.query(
              `SELECT * FROM ${E} WHERE (created_at, id) > (SELECT created_at, id FROM ${E} WHERE id = $2)
               ORDER BY created_at, id LIMIT $1`,
              [limit, startingAfter],
            );
      return rows.map((row) => toEndpoint(row as Row));
    },
    async update(id, patch) {
      const sets: string[] = [];
      const values: unknown[] = [id];
      for (const [key, value] of Object.entries(patch)) {
        const column = COLUMNS[key as keyof EndpointPatch];
        if (column === undefined || value === undefined) continue;
        values.push((column[1] as (v: unknown) => unknown)(value));
        sets.push(`${column[0]} = $${values.length}`);
      }
      const { rows } =
        sets.length === 0
          ? await pool.query(`SELECT * FROM ${E} WHERE id = $1`, values)
          : await pool.query(`UPDATE ${E} SET ${sets.join(", ")} WHERE id = $1 RETURNING *`, values);
      return rows[0] === undefined ? undefined : toEndpoint(rows[0] as Row);
    },
    async delete(id) {
      const { rowCount } = await pool.query(`DELETE FROM ${E} WHERE id = $1`, [id]);
      return (rowCount ?? 0) > 0;
    },
    async subscribed(eventType) {
      const { rows } = await pool.query(
        `SELECT * FROM ${E} WHERE status = 'enabled' AND enabled_events && $1::text[] ORDER BY created_at, id`,
        [patternsMatching(eventType)],
      );
      return rows.map((row) => toEndpoint(row as Row));
    },
    async recordOutcome(id, success, now) {
      const { rows } = await pool.query(
        success
          ? `UPDATE ${E} SET failing_since = NULL WHERE id = $1 RETURNING failing_since`
          : `UPDATE ${E} SET failing_since = COALESCE(failing_since, $2) WHERE id = $1 RETURNING failing_since`,
        success ? [id] : [id, now],
      );
      return rows[0] === undefined ? undefined : num((rows[0] as Row).failing_since);
    },
  };
}
