import type pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { migrate, type SqlDatabase, transaction } from "../../../../src/postgres/index";
import { createEvent } from "../../../../src/webhooks/delivery/event";
import {
  createPostgresDeliveryQueue,
  createPostgresEndpointStore,
  deliveryMigrations,
} from "../../../../src/webhooks/delivery/postgres/index";
import { transition } from "../../../../src/webhooks/delivery/state-machine";
import { databases, type OpenDatabase, onServer } from "../../../support/databases";
import { uniqueName } from "../../../support/services";
import { endpointFixture } from "../store-contract";

const delivered = { type: "attempt", result: { kind: "response", status: 200, durationMs: 1 } } as const;

onServer(
  "the PostgreSQL queue's row locks",
  () => {
    let open: OpenDatabase;
    let pool: SqlDatabase;
    beforeAll(async () => {
      const server = databases().find((backend) => backend.concurrent);
      if (server === undefined) throw new Error("no PostgreSQL server");
      open = await server.open({ max: 8 });
      pool = open.db;
    });
    afterAll(() => open.close());

    // Regression: a renewal (the heartbeat) and a batch of outcomes of the same worker locked the claims they share in
    // the orders they were given, the claims' and the outcomes'; holding one each and waiting for the other's, they
    // deadlocked, and PostgreSQL failed one of them (40P01): the renewal, or every outcome of the batch.
    // Regression too: sorting the ids did not fix the order, which an UPDATE takes from its plan (the array's through
    // the primary key, the table's through a scan); a renewal scanning the table, where `b` lies before `a`, and a
    // batch through the primary key deadlocked as before.
    it.each([
      { first: "renewal", renewing: [0, 1], finishing: [1, 0], renewalPlan: "primary key" },
      { first: "batch of outcomes", renewing: [1, 0], finishing: [0, 1], renewalPlan: "primary key" },
      { first: "renewal", renewing: [0, 1], finishing: [0, 1], renewalPlan: "table scan" },
      { first: "batch of outcomes", renewing: [0, 1], finishing: [0, 1], renewalPlan: "table scan" },
    ] as const)(
      "renews and completes the same claims at once without a deadlock (the $first locking first, the renewal by $renewalPlan)",
      async (order) => {
        const schema = uniqueName("whlock").toLowerCase();
        const D = `"${schema}".webhook_deliveries`;
        const disposers: (() => void)[] = [];
        try {
          await migrate(pool, deliveryMigrations({ schema }));
          await createPostgresEndpointStore({ client: pool, schema }).create(endpointFixture());
          // Enough ended deliveries that both statements find their rows by the primary key, in the order given, as on
          // any table in use (on a few rows, a scan of the table locks them in its order, the same for both).
          await pool.query(
            `INSERT INTO ${D} (id, event_id, event_type, endpoint_id, payload, created_at, status, attempts)
           SELECT 'dlv_old' || g, 'evt_old' || g, 'x.created', 'we_old', '{}', to_timestamp(0), 'delivered', 1
           FROM generate_series(1, 20000) g`,
          );
          await pool.query(`ANALYZE ${D}`);
          const queue = createPostgresDeliveryQueue({ client: pool, schema });
          for (let i = 0; i < 4; i++) await queue.publish(createEvent({ type: "x.created", data: { i } }), { now: 0 });
          const claims = await queue.claim({ limit: 4, now: 1, leaseMs: 60_000 });
          expect(claims).toHaveLength(4);
          type Claim = (typeof claims)[0];
          const [a, b, c, d] = [...claims].sort((x, y) => (x.id < y.id ? -1 : 1)) as [Claim, Claim, Claim, Claim];
          const shared = [a, b];
          // `a` moved past `b` in the table (a new row version), so a scan of the table meets `b` first.
          await pool.query(`UPDATE ${D} SET payload = payload WHERE id = $1`, [a.id]);
          const { rows: placed } = await pool.query(
            `SELECT (SELECT ctid FROM ${D} WHERE id = $1) > (SELECT ctid FROM ${D} WHERE id = $2) AS after`,
            [a.id, b.id],
          );
          expect(placed).toEqual([{ after: true }]);
          // The statement locking first stops once it holds the first of `a` and `b` it writes (the renewal keeps the
          // lease token, an outcome clears it), until the test lets it go on: advisory lock 42 is in the test's hands.
          const holds = order.first === "renewal" ? "NEW.lease_token = OLD.lease_token" : "NEW.lease_token IS NULL";
          await pool.query(
            `CREATE FUNCTION "${schema}".hold() RETURNS trigger LANGUAGE plpgsql AS $$
           BEGIN
             IF OLD.id IN ('${a.id}', '${b.id}') AND ${holds} AND current_setting('rw_test.held', true) IS DISTINCT FROM 'y'
             THEN
               PERFORM set_config('rw_test.held', 'y', true);
               PERFORM pg_advisory_xact_lock(42);
             END IF;
             RETURN NEW;
           END $$`,
          );
          await pool.query(
            `CREATE TRIGGER hold BEFORE UPDATE ON ${D} FOR EACH ROW EXECUTE FUNCTION "${schema}".hold()`,
          );
          // Until a statement on the schema waits for a lock of the kind `wait`.
          const waiting = async (wait: string) => {
            for (;;) {
              const { rows } = await pool.query(
                `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = $1
               AND query LIKE $2`,
                [wait, `%${schema}%`],
              );
              if ((rows[0] as { n: number }).n > 0) return;
              await new Promise((resolve) => setImmediate(resolve));
            }
          };
          const failed = (error: { code?: string }) => ({ failed: error.code });
          // The renewal on a connection of its own, which may not use an index: it reads the table in its order.
          const renewing = await (pool as pg.Pool).connect();
          disposers.push(() => renewing.release(true));
          if (order.renewalPlan === "table scan") {
            await renewing.query("SET enable_indexscan = off");
            await renewing.query("SET enable_bitmapscan = off");
          }
          const renew = () =>
            queue
              .withClient(renewing)
              .renew(
                order.renewing.map((i) => shared[i] as Claim),
                3,
                60_000,
              )
              .then((ids) => ({ ids: [...ids].sort() }), failed);
          // Two outcomes go out alone, then the shared claims' together, in the order they finished.
          const finish = () =>
            Promise.all(
              [c, d, ...order.finishing.map((i) => shared[i] as Claim)].map((claim) =>
                queue
                  .complete(claim, transition(claim.state, delivered, 2).state)
                  .then((stored) => ({ stored }), failed),
              ),
            );
          const [renewed, outcomes] = await transaction(pool, async (tx) => {
            await tx.query("SELECT pg_advisory_xact_lock(42)");
            if (order.first === "renewal") {
              const renewal = renew();
              await waiting("advisory");
              const stored = finish();
              await waiting("transactionid");
              return [renewal, stored] as const;
            }
            const stored = finish();
            await waiting("advisory");
            const renewal = renew();
            await waiting("transactionid");
            return [renewal, stored] as const;
          });
          // The renewal found the leases held (the outcomes committed after it), or released by the outcomes.
          expect(await renewed).toEqual({ ids: order.first === "renewal" ? [a.id, b.id] : [] });
          expect(await outcomes).toEqual(Array(4).fill({ stored: true }));
        } finally {
          for (const dispose of disposers.splice(0)) dispose();
          await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
        }
      },
    );
  },
  "it waits on row locks between connections",
);
