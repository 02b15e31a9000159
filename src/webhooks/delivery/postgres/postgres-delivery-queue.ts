import { randomUUID } from "node:crypto";
import { assertSqlClient, type SqlClient } from "../../../postgres/sql-client";
import { timestampOf } from "../../../postgres/sql-time";
import { affected } from "../../../postgres/statement";
import { patternsMatching } from "../../event-pattern/event-pattern";
import type { ClaimedDelivery, DeliveryQueue } from "../delivery-queue";
import type { DeliveryState } from "../state-machine";
import { checkTraceparent } from "../trace-context";
import { ATTEMPT_COLUMNS, deliveryColumns, toAttempt, toDelivery } from "./delivery-rows";
import { type DeliveryTablesOptions, deliveryTables } from "./delivery-tables";

/** Options of {@link createPostgresDeliveryQueue}. */
export interface PostgresDeliveryQueueOptions extends DeliveryTablesOptions {
  /** A `pg` Pool (or Client), or PGlite: see `SqlClient` in `rest-webhooks/postgres`. */
  client: SqlClient;
}

/** The PostgreSQL queue: a {@link DeliveryQueue} that can also act inside your transaction. */
export interface PostgresDeliveryQueue extends DeliveryQueue {
  /**
   * The same queue issuing its statements on `client`, e.g. the `tx` of your transaction: `publish` then inserts the
   * deliveries in it, so the business write and its event commit together (the transactional outbox).
   * @example await transaction(pool, async (tx) => { await saveOrder(tx); await queue.withClient(tx).publish(event); })
   */
  withClient(client: SqlClient): PostgresDeliveryQueue;
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
 * The PostgreSQL {@link DeliveryQueue}: the transactional outbox. `publish` inserts the deliveries with one statement,
 * which runs in your transaction through `withClient(tx)`, so an order and its event commit together. Workers claim
 * with `FOR UPDATE SKIP LOCKED` and a lease (the lease end is written as the due time, so a crashed worker's claims
 * fall due again by themselves); several processes can share the tables. Create them with
 * `migrate(pool, deliveryMigrations())`.
 * @example
 * await migrate(pool, deliveryMigrations());
 * const queue = createPostgresDeliveryQueue({ client: pool });
 */
export function createPostgresDeliveryQueue(options: PostgresDeliveryQueueOptions): PostgresDeliveryQueue {
  const { client } = options;
  assertSqlClient(client, "createPostgresDeliveryQueue");
  const { endpoints: E, deliveries: D, attempts: A } = deliveryTables(options, "createPostgresDeliveryQueue");
  const SET_STATE = `status = $3, attempts = $4, next_attempt_at = ${timestampOf("$5")},
    last_attempt_at = ${timestampOf("$6")}, last_status = $7, last_error_kind = $8, delivered_at = ${timestampOf("$9")},
    lease_token = NULL, lease_until = NULL`;
  const SCHEDULED = `status IN ('pending', 'failed')`;

  return {
    withClient: (other) => createPostgresDeliveryQueue({ ...options, client: other }),
    async publish(event, publishOptions = {}) {
      const now = publishOptions.now ?? Date.now();
      checkTraceparent(publishOptions.traceparent, "publish");
      const { rows } = await client.query(
        `INSERT INTO ${D} (id, event_id, event_type, endpoint_id, payload, created_at, status, attempts, next_attempt_at,
           traceparent)
         SELECT 'dlv_' || replace(gen_random_uuid()::text, '-', ''), $1, $2, e.id, $3, ${timestampOf("$4")}, 'pending', 0,
           ${timestampOf("$5")}, $7
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
          publishOptions.traceparent ?? null,
        ],
      );
      return { deliveryIds: rows.map((row) => String((row as { id: unknown }).id)) };
    },
    async claim({ limit, now, leaseMs }) {
      const token = randomUUID();
      const { rows } = await client.query(
        `UPDATE ${D} d SET lease_token = $3, lease_until = ${timestampOf("($1::float8 + $4::float8)")},
           next_attempt_at = ${timestampOf("($1::float8 + $4::float8)")}
         FROM (SELECT id FROM ${D} WHERE ${SCHEDULED} AND next_attempt_at <= ${timestampOf("$1")}
               ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED) due
         WHERE d.id = due.id
         RETURNING ${deliveryColumns("d")}`,
        [now, limit, token, leaseMs],
      );
      return rows.map((row): ClaimedDelivery => ({ ...toDelivery(row), leaseToken: token, leaseUntil: now + leaseMs }));
    },
    async complete(claim, state, attempt) {
      const values = [claim.id, claim.leaseToken, ...stateValues(state)];
      if (attempt === undefined) {
        const result = await client.query(`UPDATE ${D} SET ${SET_STATE} WHERE id = $1 AND lease_token = $2`, values);
        return affected(result) > 0;
      }
      const { rows } = await client.query(
        `WITH logged AS (
           INSERT INTO ${A} (delivery_id, endpoint_id, event_id, attempt, started_at, duration_ms, status, error_kind, response)
           VALUES ($1, $10, $11, $12, ${timestampOf("$13")}, $14, $15, $16, $17)
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
      return Number((rows[0] as { n?: unknown } | undefined)?.n ?? 0) > 0;
    },
    async update(id, from, state, now = Date.now()) {
      const result = await client.query(
        `UPDATE ${D} SET ${SET_STATE}
         WHERE id = $1 AND status = ANY($2::text[]) AND (lease_token IS NULL OR lease_until <= ${timestampOf("$10")})`,
        [id, [...from], ...stateValues(state), now],
      );
      return affected(result) > 0;
    },
    async nextDueAt() {
      const { rows } = await client.query(
        `SELECT round(extract(epoch from min(next_attempt_at)) * 1000)::float8 AS due FROM ${D} WHERE ${SCHEDULED}`,
      );
      const due = (rows[0] as { due?: unknown } | undefined)?.due;
      return typeof due === "number" ? due : undefined;
    },
    async get(id) {
      const { rows } = await client.query(`SELECT ${deliveryColumns()} FROM ${D} WHERE id = $1`, [id]);
      return rows[0] === undefined ? undefined : toDelivery(rows[0]);
    },
    async list(endpointId, listOptions = {}) {
      const { rows } = await client.query(
        `SELECT ${deliveryColumns()} FROM ${D} WHERE endpoint_id = $1
           AND ($2::text[] IS NULL OR status = ANY($2::text[]))
           AND ($3::float8 IS NULL OR created_at >= ${timestampOf("$3")})
         ORDER BY created_at DESC, id DESC LIMIT $4`,
        [
          endpointId,
          listOptions.status === undefined ? null : [...listOptions.status],
          listOptions.since ?? null,
          listOptions.limit ?? 100,
        ],
      );
      return rows.map(toDelivery);
    },
    async attempts({ endpointId, deliveryId, limit = 100 }) {
      const { rows } = await client.query(
        `SELECT ${ATTEMPT_COLUMNS} FROM ${A} WHERE endpoint_id = $1 AND ($2::text IS NULL OR delivery_id = $2)
         ORDER BY seq DESC LIMIT $3`,
        [endpointId, deliveryId ?? null, limit],
      );
      return rows.map(toAttempt);
    },
  };
}
