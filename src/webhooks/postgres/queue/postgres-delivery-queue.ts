import { randomUUID } from "node:crypto";
import type { AttemptRecord, DeliveryErrorKind } from "../../delivery/attempt";
import type { ClaimedDelivery, DeliveryQueue, DeliveryRecord, Queryable } from "../../delivery/delivery-queue";
import { patternsMatching } from "../../delivery/event-type";
import type { DeliveryState, DeliveryStatus } from "../../delivery/state-machine";
import { num, type WebhookTablesOptions, webhookTables } from "./tables";

/** Options of {@link createPostgresDeliveryQueue}. */
export interface PostgresDeliveryQueueOptions extends WebhookTablesOptions {
  /** A `pg` Pool (or any client with `query`); `publish` may be given the caller's transaction client instead. */
  pool: Queryable;
}

type Row = Record<string, unknown>;

function toRecord(row: Row): DeliveryRecord {
  return {
    id: row.id as string,
    eventId: row.event_id as string,
    eventType: row.event_type as string,
    endpointId: row.endpoint_id as string,
    payload: row.payload as string,
    createdAt: Number(row.created_at),
    state: {
      status: row.status as DeliveryStatus,
      attempts: Number(row.attempts),
      nextAttemptAt: num(row.next_attempt_at),
      lastAttemptAt: num(row.last_attempt_at),
      lastStatus: num(row.last_status),
      lastErrorKind: (row.last_error_kind as DeliveryErrorKind | null) ?? null,
      deliveredAt: num(row.delivered_at),
    },
  };
}

function stateValues(state: DeliveryState): unknown[] {
  return [
    state.status,
    state.attempts,
    state.nextAttemptAt,
    state.lastAttemptAt,
    state.lastStatus,
    state.lastErrorKind,
    state.deliveredAt,
  ];
}

/**
 * The PostgreSQL {@link DeliveryQueue}: the transactional outbox. `publish` inserts the deliveries with one statement
 * that may run in the caller's transaction (`{ client }`), so an order and its event commit together. Workers claim
 * with `FOR UPDATE SKIP LOCKED` and a lease (the lease end is written as the due time, so a crashed worker's claims
 * fall due again by themselves); several processes can share the tables.
 * @example
 * await migrateWebhookQueue(pool);
 * const queue = createPostgresDeliveryQueue({ pool });
 * await client.query("BEGIN"); ...; await queue.publish(event, { client }); await client.query("COMMIT");
 */
export function createPostgresDeliveryQueue(options: PostgresDeliveryQueueOptions): DeliveryQueue {
  const { pool } = options;
  const { endpoints: E, deliveries: D, attempts: A } = webhookTables(options);
  const SET_STATE = `status = $3, attempts = $4, next_attempt_at = $5, last_attempt_at = $6, last_status = $7,
    last_error_kind = $8, delivered_at = $9, lease_token = NULL, lease_until = NULL`;
  const SCHEDULED = `status IN ('pending', 'failed')`;

  return {
    async publish(event, publishOptions = {}) {
      const now = publishOptions.now ?? Date.now();
      const { rows } = await (publishOptions.client ?? pool).query(
        `INSERT INTO ${D} (id, event_id, event_type, endpoint_id, payload, created_at, status, attempts, next_attempt_at)
         SELECT 'dlv_' || replace(gen_random_uuid()::text, '-', ''), $1, $2, e.id, $3, $4, 'pending', 0, $5
         FROM ${E} e WHERE e.status = 'enabled' AND e.enabled_events && $6::text[]
         ON CONFLICT (event_id, endpoint_id) DO NOTHING
         RETURNING id`,
        [
          event.id,
          event.type,
          JSON.stringify(event),
          now,
          now + (publishOptions.delayMs ?? 0),
          patternsMatching(event.type),
        ],
      );
      return { deliveryIds: rows.map((row) => (row as Row).id as string) };
    },
    async claim({ limit, now, leaseMs }) {
      const token = randomUUID();
      const { rows } = await pool.query(
        `UPDATE ${D} d SET lease_token = $3, lease_until = $1::bigint + $4::bigint, next_attempt_at = $1::bigint + $4::bigint
         FROM (SELECT id FROM ${D} WHERE ${SCHEDULED} AND next_attempt_at <= $1
               ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED) due
         WHERE d.id = due.id
         RETURNING d.*`,
        [now, limit, token, leaseMs],
      );
      return rows.map(
        (row): ClaimedDelivery => ({ ...toRecord(row as Row), leaseToken: token, leaseUntil: now + leaseMs }),
      );
    },
    async complete(claim, state, attempt) {
      const values = [claim.id, claim.leaseToken, ...stateValues(state)];
      if (attempt === undefined) {
        const { rowCount } = await pool.query(
          `UPDATE ${D} SET ${SET_STATE} WHERE id = $1 AND lease_token = $2`,
          values,
        );
        return (rowCount ?? 0) > 0;
      }
      const { rows } = await pool.query(
        `WITH logged AS (
           INSERT INTO ${A} (delivery_id, endpoint_id, event_id, attempt, started_at, duration_ms, status, error_kind, response)
           VALUES ($1, $10, $11, $12, $13, $14, $15, $16, $17)
         ), updated AS (
           UPDATE ${D} SET ${SET_STATE} WHERE id = $1 AND lease_token = $2 RETURNING 1
         )
         SELECT count(*)::int AS n FROM updated`,
        [
          ...values,
          attempt.endpointId,
          attempt.eventId,
          attempt.attempt,
          attempt.startedAt,
          Math.round(attempt.durationMs),
          attempt.status,
          attempt.errorKind,
          attempt.response,
        ],
      );
      return ((rows[0] as Row | undefined)?.n as number) > 0;
    },
    async update(id, from, state, now = Date.now()) {
      const { rowCount } = await pool.query(
        `UPDATE ${D} SET ${SET_STATE}
         WHERE id = $1 AND status = ANY($2::text[]) AND (lease_token IS NULL OR lease_until <= $10)`,
        [id, [...from], ...stateValues(state), now],
      );
      return (rowCount ?? 0) > 0;
    },
    async nextDueAt() {
      const { rows } = await pool.query(`SELECT min(next_attempt_at) AS due FROM ${D} WHERE ${SCHEDULED}`);
      return num((rows[0] as Row | undefined)?.due) ?? undefined;
    },
    async get(id) {
      const { rows } = await pool.query(`SELECT * FROM ${D} WHERE id = $1`, [id]);
      return rows[0] === undefined ? undefined : toRecord(rows[0] as Row);
    },
    async list(endpointId, listOptions = {}) {
      const { rows } = await pool.query(
        `SELECT * FROM ${D} WHERE endpoint_id = $1
           AND ($2::text[] IS NULL OR status = ANY($2::text[])) AND ($3::bigint IS NULL OR created_at >= $3)
         ORDER BY created_at DESC, id DESC LIMIT $4`,
        [
          endpointId,
          listOptions.status === undefined ? null : [...listOptions.status],
          listOptions.since ?? null,
          listOptions.limit ?? 100,
        ],
      );
      return rows.map((row) => toRecord(row as Row));
    },
    async attempts({ endpointId, deliveryId, limit = 100 }) {
      const { rows } = await pool.query(
        `SELECT * FROM ${A} WHERE endpoint_id = $1 AND ($2::text IS NULL OR delivery_id = $2)
         ORDER BY seq DESC LIMIT $3`,
        [endpointId, deliveryId ?? null, limit],
      );
      return rows.map((r) => {
        const row = r as Row;
        return {
          deliveryId: row.delivery_id as string,
          endpointId: row.endpoint_id as string,
          eventId: row.event_id as string,
          attempt: Number(row.attempt),
          startedAt: Number(row.started_at),
          durationMs: Number(row.duration_ms),
          status: num(row.status),
          errorKind: (row.error_kind as DeliveryErrorKind | null) ?? null,
          response: (row.response as string | null) ?? null,
        } satisfies AttemptRecord;
      });
    },
  };
}
