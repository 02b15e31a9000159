import type { SqlResult } from "../../../postgres/sql-client";
import { timestampOf } from "../../../postgres/sql-time";
import type { AttemptInput } from "../attempt";
import type { ClaimedDelivery } from "../delivery-queue";
import { logText } from "../queue-arguments";
import type { DeliveryState } from "../state-machine";
import type { DeliveryTables } from "./delivery-tables";
import { reachOf } from "./reach";

/** One `complete` call of the PostgreSQL queue. Internal. */
export interface Completion {
  readonly claim: ClaimedDelivery;
  readonly state: DeliveryState;
  readonly attempt: AttemptInput | undefined;
  /** When it was stored, on the queue's clock (epoch ms): a terminal state's end. */
  readonly at: number;
}

/** SQL of the statuses a delivery ends in. */
export const TERMINAL = `('delivered', 'exhausted')`;

/**
 * How many rows a batch's arrays hold at most, when the statement says so: PostgreSQL plans a prepared statement's
 * generic plan (once per connection) only when it estimates it no dearer than planning afresh, and it takes an array
 * of unknown length for 10 rows; for the usual small batch (a few outcomes stored together) it planned every
 * statement afresh, which cost more than running it (0.5 ms against 0.3 ms for four rows). A reach of `undefined`:
 * unbounded (batches past {@link COMPLETION_REACH}).
 */
export interface CompletionReach {
  readonly deliveries: number;
  readonly attempts: number;
}

/** The largest batch (deliveries, and attempts) whose reach a statement states; past it, 10 rows is no overestimate. */
export const COMPLETION_REACH = 8;

/** The reach of a batch: each count rounded up to a power of two (0 stays 0), or `undefined` past COMPLETION_REACH. */
export function completionReach(batch: readonly Completion[]): CompletionReach | undefined {
  const attempts = batch.reduce((count, c) => count + (c.attempt === undefined ? 0 : 1), 0);
  if (batch.length > COMPLETION_REACH || attempts > COMPLETION_REACH) return undefined;
  return { deliveries: reachOf(batch.length), attempts: reachOf(attempts) };
}

/**
 * The statement that completes many claims at once: each delivery's new state where its lease still holds, and the
 * attempts logged in the order given. Its rows come from arrays (`unnest`), so one text serves any batch size up to
 * its reach, and the batch costs one round trip and one commit (one WAL flush) however many workers' attempts it
 * carries.
 */
export function completionStatement(
  tables: Pick<DeliveryTables, "deliveries" | "attempts">,
  reach?: CompletionReach,
): string {
  const { deliveries: D, attempts: A } = tables;
  // A LIMIT no smaller than the array: it takes nothing away, and it tells the planner how many rows come.
  const within = (rows: number | undefined) => (rows === undefined ? "" : ` LIMIT ${rows}`);
  return `WITH input AS (
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::float8[], $6::float8[], $7::int[],
        $8::text[], $9::float8[], $19::float8[])
        AS i(id, token, status, attempts, next_at, last_at, last_status, last_error_kind, delivered_at, ended_at)${within(reach?.deliveries)}
    ), logged AS (
      INSERT INTO ${A} (delivery_id, endpoint_id, event_id, attempt, started_at, duration_ms, status, error_kind, response)
      SELECT a.delivery_id, a.endpoint_id, a.event_id, a.attempt, ${timestampOf("a.started_at")}, a.duration_ms, a.status,
        a.error_kind, a.response
      FROM (
        SELECT * FROM unnest($10::text[], $11::text[], $12::text[], $13::int[], $14::float8[], $15::int[], $16::int[],
          $17::text[], $18::text[]) WITH ORDINALITY
          AS a(delivery_id, endpoint_id, event_id, attempt, started_at, duration_ms, status, error_kind, response, n)${within(reach?.attempts)}
      ) a
      ORDER BY a.n
    ), ${lockedInIdOrder(D, "input")}, updated AS (
      UPDATE ${D} d SET status = i.status, attempts = i.attempts, next_attempt_at = ${timestampOf("i.next_at")},
        last_attempt_at = ${timestampOf("i.last_at")}, last_status = i.last_status, last_error_kind = i.last_error_kind,
        delivered_at = ${timestampOf("i.delivered_at")}, lease_token = NULL, lease_until = NULL,
        ended_at = CASE WHEN i.status IN ${TERMINAL} THEN ${timestampOf("i.ended_at")} END
      FROM input i JOIN locked USING (id) WHERE d.id = i.id AND d.lease_token = i.token
      RETURNING d.id, i.token
    )
    SELECT id, token FROM updated`;
}

/**
 * The statement's values for a batch, column by column: the states of `leases` (the batch, but one completion per
 * lease), the attempts of the whole batch.
 */
export function completionValues(batch: readonly Completion[], leases: readonly Completion[] = batch): unknown[][] {
  const attempts = batch.flatMap((c) => (c.attempt === undefined ? [] : [c.attempt]));
  const column = <T, V>(rows: readonly T[], value: (row: T) => V) => rows.map(value);
  return [
    column(leases, (c) => c.claim.id),
    column(leases, (c) => c.claim.leaseToken),
    column(leases, (c) => c.state.status),
    column(leases, (c) => c.state.attempts),
    column(leases, (c) => c.state.nextAttemptAt),
    column(leases, (c) => c.state.lastAttemptAt),
    column(leases, (c) => c.state.lastStatus),
    column(leases, (c) => c.state.lastErrorKind),
    column(leases, (c) => c.state.deliveredAt),
    column(attempts, (a) => a.deliveryId),
    column(attempts, (a) => a.endpointId),
    column(attempts, (a) => a.eventId),
    column(attempts, (a) => a.attempt),
    column(attempts, (a) => a.startedAt),
    column(attempts, (a) => Math.round(a.durationMs)),
    column(attempts, (a) => a.status),
    column(attempts, (a) => a.errorKind),
    column(attempts, (a) => logText(a.response)),
    column(leases, (c) => c.at),
  ];
}

const leaseOf = (c: Completion) => `${c.claim.id} ${c.claim.leaseToken}`;

/**
 * The CTE `locked`: the rows of `deliveries` whose lease `input` (a CTE of `id`, `token`) names, locked in id order
 * before the statement writes any of them. Every queue statement that waits for row locks (a batch of outcomes, a
 * renewal) locks through it, so two of them sharing rows never each hold one the other waits for (a deadlock, 40P01,
 * failing a renewal or a whole batch of outcomes). An `UPDATE … FROM unnest(…)` alone locks in its plan's scan order
 * (the array's through the primary key, the table's through a scan), which a sorted array does not fix. The locks are
 * taken after the sort (a `LockRows` above it), and MATERIALIZED keeps the planner from folding them into the join.
 * Internal.
 */
export function lockedInIdOrder(deliveries: string, input: string): string {
  return `locked AS MATERIALIZED (
      SELECT d.id FROM ${deliveries} d WHERE (d.id, d.lease_token) IN (SELECT id, token FROM ${input})
      ORDER BY d.id FOR UPDATE
    )`;
}

/**
 * Completes a batch; per completion, whether its lease still held (its state was written). Of two completions of one
 * lease in a batch the first is written and the second refused, as when each comes in a batch of its own (the first
 * released the lease): an UPDATE joined to both rows would write either one, and answer both as written.
 */
export async function completeBatch(
  query: (values: unknown[]) => Promise<SqlResult>,
  batch: readonly Completion[],
): Promise<boolean[]> {
  const keys = batch.map(leaseOf);
  const leases =
    new Set(keys).size === batch.length ? batch : batch.filter((_, i) => keys.indexOf(keys[i] as string) === i);
  const { rows } = await query(completionValues(batch, leases));
  const written = new Set(rows.map((row) => `${(row as { id: string }).id} ${(row as { token: string }).token}`));
  // Set.delete: true for the first completion of a written lease only.
  return keys.map((key) => written.delete(key));
}
