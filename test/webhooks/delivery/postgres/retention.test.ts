import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate, type SqlClient, type SqlDatabase, type SqlResult, transaction } from "../../../../src/postgres/index";
import type { DeliveryQueue } from "../../../../src/webhooks/delivery/delivery-queue";
import { createEvent } from "../../../../src/webhooks/delivery/event";
import {
  createPostgresDeliveryQueue,
  createPostgresEndpointStore,
  deliveryMigrations,
} from "../../../../src/webhooks/delivery/postgres/index";
import { transition } from "../../../../src/webhooks/delivery/state-machine";
import { databases, type OpenDatabase } from "../../../support/databases";
import { uniqueName } from "../../../support/services";
import { endpointFixture } from "../store-contract";

const T0 = 1_700_000_000_000;
const DAY = 86_400_000;
const delivered = { type: "attempt", result: { kind: "response", status: 200, durationMs: 1 } } as const;

// The retention's statement, told apart by what it returns.
const isPurge = (text: string) => /AS deliveries, .* AS attempts/s.test(text);

/** `client` with the purge statement handed to `purge` instead. */
function routingPurge(client: SqlClient, purge: (text: string, values?: unknown[]) => Promise<SqlResult>): SqlClient {
  return { query: (text, values) => (isPurge(text) ? purge(text, values) : client.query(text, values)) };
}

describe.each(databases())("the PostgreSQL queue's retention on $name", (backend) => {
  let open: OpenDatabase;
  let pool: SqlDatabase;
  beforeAll(async () => {
    open = await backend.open({ max: 6 });
    pool = open.db;
  });
  afterAll(() => open.close());

  async function setup() {
    const schema = uniqueName("whpurge").toLowerCase();
    await migrate(pool, deliveryMigrations({ schema }));
    const endpoint = endpointFixture({ enabledEvents: ["r.*"] });
    await createPostgresEndpointStore({ client: pool, schema }).create(endpoint);
    const count = async (table: string, where = "true") => {
      const { rows } = await pool.query(`SELECT count(*)::int AS n FROM "${schema}".${table} WHERE ${where}`);
      return (rows[0] as { n: number }).n;
    };
    // A backlog retention never purged: `n` deliveries that ended, and as many log lines, 30 days before T0.
    const backlog = async (n: number) => {
      await pool.query(
        `INSERT INTO "${schema}".webhook_deliveries (id, event_id, event_type, endpoint_id, payload, created_at, status,
           attempts, last_attempt_at, delivered_at, ended_at)
         SELECT 'dlv_old' || g, 'evt_old' || g, 'r.old', $1, '{}', to_timestamp($2::float8 / 1000), 'delivered', 1,
           to_timestamp($2::float8 / 1000), to_timestamp($2::float8 / 1000), to_timestamp($2::float8 / 1000)
         FROM generate_series(1, $3::int) g`,
        [endpoint.id, T0 - 30 * DAY, n],
      );
      await pool.query(
        `INSERT INTO "${schema}".webhook_attempts (delivery_id, endpoint_id, event_id, attempt, started_at, duration_ms,
           status)
         SELECT 'dlv_old' || g, $1, 'evt_old' || g, 1, to_timestamp($2::float8 / 1000), 1, 200
         FROM generate_series(1, $3::int) g`,
        [endpoint.id, T0 - 30 * DAY, n],
      );
    };
    // Publishes `n` events at T0 and stores a delivered attempt for each; the outcomes settle together.
    const outcomes = async (queue: DeliveryQueue, n: number, worker: DeliveryQueue = queue) => {
      for (let i = 0; i < n; i++)
        await queue.publish(createEvent({ type: "r.done", data: { i }, now: T0 }), { now: T0 });
      const claims = await worker.claim({ limit: n, now: T0, leaseMs: 60_000 });
      expect(claims).toHaveLength(n);
      return claims.map((claim) =>
        worker.complete(claim, transition(claim.state, delivered, T0).state, {
          deliveryId: claim.id,
          endpointId: endpoint.id,
          eventId: claim.eventId,
          attempt: 1,
          startedAt: T0,
          durationMs: 1,
          status: 200,
          errorKind: null,
          response: "",
        }),
      );
    };
    return { schema, count, backlog, outcomes, drop: () => pool.query(`DROP SCHEMA "${schema}" CASCADE`) };
  }

  // Task "a long first purge blocks claims": the first purge on a queue with a large backlog must not delete it in one
  // statement (one long transaction, its locks and I/O, maybe past a statement_timeout).
  it("purges a large backlog in bounded statements: 256 deliveries and 256 log lines each, the backlog gone after ceil(n / 256) purges", async () => {
    const t = await setup();
    try {
      await t.backlog(600);
      const purges: number[] = [];
      const counting = routingPurge(pool, async (text, values) => {
        const result = await pool.query(text, values);
        const row = result.rows[0] as { deliveries: number; attempts: number };
        purges.push(row.deliveries, row.attempts);
        return result;
      });
      const queue = createPostgresDeliveryQueue({ client: counting, schema: t.schema, now: () => T0 });
      for (let purge = 1; purge <= 3; purge++) {
        await Promise.all(await t.outcomes(queue, 64)); // 64 outcomes: one purge
        expect(purges).toHaveLength(2 * purge);
      }
      expect(purges).toEqual([256, 256, 256, 256, 88, 88]);
      expect(await t.count("webhook_deliveries", "id LIKE 'dlv_old%'")).toBe(0);
      expect(await t.count("webhook_attempts", "delivery_id LIKE 'dlv_old%'")).toBe(0);
      expect(await t.count("webhook_deliveries")).toBe(3 * 64);
    } finally {
      await t.drop();
    }
  });

  // A second connection beside the purge's open transaction: the server only (PGlite has one connection).
  const onServer = backend.concurrent ? it : undefined;
  onServer?.("claims, completes and publishes while a purge of a large backlog holds its locks", async () => {
    const t = await setup();
    // The purge runs in a transaction held open until the other worker is done: its row locks stay taken.
    let purged!: () => void;
    const purging = new Promise<void>((resolve) => (purged = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    try {
      await t.backlog(2_000);
      const holding = routingPurge(pool, (text, values) =>
        transaction(pool, async (tx) => {
          const result = await tx.query(text, values);
          purged();
          await released;
          return result;
        }),
      );
      const purger = createPostgresDeliveryQueue({ client: holding, schema: t.schema, now: () => T0 });
      const other = createPostgresDeliveryQueue({ client: pool, schema: t.schema, now: () => T0 });
      const first = await t.outcomes(purger, 64);
      await purging;
      // The other worker's whole round, publish to stored outcome, while the purge's transaction is open.
      expect(await Promise.all(await t.outcomes(other, 8))).toEqual(Array(8).fill(true));
      release();
      expect(await Promise.all(first)).toEqual(Array(64).fill(true));
      expect(await t.count("webhook_deliveries", "id LIKE 'dlv_old%'")).toBe(2_000 - 256);
    } finally {
      release();
      await t.drop();
    }
  });

  // Regression: a queue of withClient(tx) purged inside the caller's transaction, and a purge failing there (a lock or
  // statement timeout, a deadlock) aborted it: the outcomes reported stored were rolled back with it, and the
  // transaction's next statement failed with "current transaction is aborted". The purge also held its row locks
  // until the caller committed.
  it("never purges inside the caller's transaction (withClient): a purge failing there cannot abort it", async () => {
    const t = await setup();
    try {
      await t.backlog(10);
      const queue = createPostgresDeliveryQueue({ client: pool, schema: t.schema, now: () => T0 });
      const stored = await transaction(pool, async (tx) => {
        // A purge failing as the database fails it, in the transaction.
        const failing = routingPurge(tx, () => tx.query("SELECT 1 / 0"));
        const inTx = queue.withClient(failing);
        const written = await Promise.all(await t.outcomes(inTx, 64));
        await tx.query("SELECT 1"); // the transaction goes on
        return written;
      });
      expect(stored).toEqual(Array(64).fill(true));
      expect(await t.count("webhook_deliveries", "status = 'delivered' AND id NOT LIKE 'dlv_old%'")).toBe(64);
      // The queue's own outcomes purge as before.
      await Promise.all(await t.outcomes(queue, 64));
      expect(await t.count("webhook_deliveries", "id LIKE 'dlv_old%'")).toBe(0);
    } finally {
      await t.drop();
    }
  });
});
