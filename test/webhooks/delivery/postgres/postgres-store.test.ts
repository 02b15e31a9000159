import { beforeAll, describe, expect, it } from "vitest";
import { migrate, migrationSql, type SqlClient, type SqlDatabase, transaction } from "../../../../src/postgres/index";
import type { AttemptRecord } from "../../../../src/webhooks/delivery/attempt";
import type { ClaimedDelivery } from "../../../../src/webhooks/delivery/delivery-queue";
import { createEvent } from "../../../../src/webhooks/delivery/event";
import {
  createPostgresDeliveryQueue,
  createPostgresEndpointStore,
  deliveryMigrations,
} from "../../../../src/webhooks/delivery/postgres/index";
import { transition } from "../../../../src/webhooks/delivery/state-machine";
import { databases } from "../../../support/databases";
import { deliveryDatabase } from "../delivery-stores";
import { endpointFixture, storeContract } from "../store-contract";

describe.each(databases())("the PostgreSQL webhook queue on $name", (backend) => {
  // Each test has its schema to itself: the suite's one, emptied, unless it needs one that nothing else touched.
  const schemas = deliveryDatabase(backend, { prefix: "whq", max: 6 });
  let pool: SqlDatabase;
  beforeAll(() => {
    pool = schemas.db;
  });

  storeContract("postgres", async (options) => {
    const schema = await schemas.emptied();
    return {
      // The contract's watch is this object's own writes; every process's (listen) is endpoint-notifications.test.ts.
      endpoints: createPostgresEndpointStore({ client: pool, schema, listen: false }),
      queue: createPostgresDeliveryQueue({ client: pool, schema, now: options?.now }),
    };
  });

  it("publish runs in the caller's transaction: a rollback leaves no delivery (transactional outbox)", async () => {
    const schema = schemas.unmigrated();
    expect(await migrate(pool, deliveryMigrations({ schema }))).toEqual(
      deliveryMigrations({ schema }).map((migration) => `${schema}:${migration.id}`),
    );
    expect(await migrate(pool, deliveryMigrations({ schema }))).toEqual([]); // recorded: nothing to apply
    const endpoints = createPostgresEndpointStore({ client: pool, schema });
    const queue = createPostgresDeliveryQueue({ client: pool, schema });
    const e = endpointFixture();
    await endpoints.create(e);
    const rolledBack = createEvent({ type: "order.created", data: { id: 1 } });
    await expect(
      transaction(pool, async (tx) => {
        expect((await queue.withClient(tx).publish(rolledBack)).deliveryIds).toHaveLength(1);
        throw new Error("the business write failed");
      }),
    ).rejects.toThrow("the business write failed");
    const committed = createEvent({ type: "order.created", data: { id: 2 } });
    const deliveryIds = await transaction(pool, async (tx) => {
      const published = await queue.withClient(tx).publish(committed);
      // Not visible to workers until the caller commits (PGlite has no second connection to look from).
      if (backend.concurrent)
        expect(await queue.claim({ limit: 10, now: Date.now() + 1_000, leaseMs: 1_000 })).toEqual([]);
      return published.deliveryIds;
    });
    const claimed = await queue.claim({ limit: 10, now: Date.now() + 1_000, leaseMs: 1_000 });
    expect(claimed.map((c) => c.id)).toEqual(deliveryIds);
    expect(claimed.map((c) => c.eventId)).toEqual([committed.id]);
  });

  it("publish inserts an event's deliveries in endpoint id order, whatever order the plan reads the endpoints in (regression: two publishes of one id could deadlock, 40P01)", async () => {
    const schema = await schemas.emptied();
    const endpoints = createPostgresEndpointStore({ client: pool, schema });
    const queue = createPostgresDeliveryQueue({ client: pool, schema });
    // Stored against id order, so a scan of the table reads them backwards.
    const ids = ["we_d", "we_c", "we_b", "we_a"];
    for (const id of ids) await endpoints.create(endpointFixture({ id }));
    await queue.publish(createEvent({ type: "order.created", data: { id: 1 } }));
    // A fresh table's rows lie in the order they were inserted, which is the order their index entries were taken.
    const { rows } = await pool.query(`SELECT endpoint_id FROM "${schema}"."webhook_deliveries" ORDER BY ctid`);
    expect(rows.map((row) => (row as { endpoint_id: string }).endpoint_id)).toEqual([...ids].sort());
  });

  it("ranks a delivery whose lease ran out by the due time it had when claimed (DeliveryQueue.claim)", async () => {
    const schema = await schemas.emptied();
    const endpoints = createPostgresEndpointStore({ client: pool, schema, listen: false });
    const queue = createPostgresDeliveryQueue({ client: pool, schema });
    await endpoints.create(endpointFixture());
    const t0 = 1_700_000_000_000;
    const publish = async (id: string, delayMs: number) =>
      (await queue.publish(createEvent({ id, type: "r.created", data: {} }), { now: t0, delayMs })).deliveryIds[0];
    const crashed = await publish("evt_crashed", 0);
    await publish("evt_later", 1_000);
    expect((await queue.claim({ limit: 1, now: t0, leaseMs: 5_000 })).map((c) => c.id)).toEqual([crashed]);
    // A claim leaves next_attempt_at as it was (a HOT update): the crashed worker's delivery, due since t0, goes first.
    expect((await queue.claim({ limit: 1, now: t0 + 6_000, leaseMs: 5_000 })).map((c) => c.id)).toEqual([crashed]);
  });

  describe("close (shutdown)", () => {
    const delivered = { type: "attempt", result: { kind: "response", status: 200, durationMs: 1 } } as const;

    it("writes the outcomes taken before it, then refuses one after it with store_closed, writing nothing", async () => {
      const schema = await schemas.emptied();
      const endpoints = createPostgresEndpointStore({ client: pool, schema });
      const queue = createPostgresDeliveryQueue({ client: pool, schema });
      await endpoints.create(endpointFixture());
      const now = Date.now();
      for (let i = 0; i < 3; i++) await queue.publish(createEvent({ type: "order.created", data: { i } }), { now });
      const claims = await queue.claim({ limit: 10, now, leaseMs: 60_000 });
      expect(claims).toHaveLength(3);
      const [late, ...taken] = claims as [ClaimedDelivery, ...ClaimedDelivery[]];
      const outcome = (claim: ClaimedDelivery) => queue.complete(claim, transition(claim.state, delivered, now).state);
      // Taken before close and not yet written (group commit queues them behind the first).
      const stored = taken.map(outcome);
      const closing = queue.close();
      const refused = outcome(late);
      await expect(refused).rejects.toMatchObject({ code: "store_closed", name: "StoreClosedError" });
      expect(queue.close()).toBe(closing);
      await closing;
      // Written by the time close resolved, before their callers are looked at.
      for (const claim of taken) expect((await queue.get(claim.id))?.state.status).toBe("delivered");
      expect(await Promise.all(stored)).toEqual([true, true]);
      // The refused outcome wrote nothing: the delivery is still leased, due again at its lease end.
      expect((await queue.get(late.id))?.state.status).toBe("pending");
      await expect(outcome(late)).rejects.toMatchObject({ code: "store_closed" });
    });
  });

  it("reads an endpoint stored before endpoint headers (migration delivery@10) as adding none", async () => {
    const schema = await schemas.fresh((name) =>
      deliveryMigrations({ schema: name }).filter((migration) => migration.id !== "delivery@10"),
    );
    const old = endpointFixture();
    await pool.query(
      `INSERT INTO "${schema}"."webhook_endpoints" (id, url, enabled_events, secrets, status, created_at)
       VALUES ($1, $2, $3, $4::jsonb, 'enabled', to_timestamp($5 / 1000.0))`,
      [old.id, old.url, old.enabledEvents, JSON.stringify(old.secrets), old.createdAt],
    );
    expect(await migrate(pool, deliveryMigrations({ schema }))).toEqual([`${schema}:delivery@10`]);
    expect(await createPostgresEndpointStore({ client: pool, schema }).get(old.id)).toEqual(old);
  });

  it("reads an endpoint stored before tenants (migration delivery@9) as the operator's, which keeps getting the events published without a tenant", async () => {
    const schema = await schemas.fresh((name) =>
      deliveryMigrations({ schema: name }).filter((migration) => migration.id !== "delivery@9"),
    );
    const old = endpointFixture({ enabledEvents: ["order.created"] });
    await pool.query(
      `INSERT INTO "${schema}"."webhook_endpoints" (id, url, enabled_events, secrets, status, created_at)
       VALUES ($1, $2, $3, $4::jsonb, 'enabled', to_timestamp($5 / 1000.0))`,
      [old.id, old.url, old.enabledEvents, JSON.stringify(old.secrets), old.createdAt],
    );
    expect(await migrate(pool, deliveryMigrations({ schema }))).toEqual([`${schema}:delivery@9`]);
    const endpoints = createPostgresEndpointStore({ client: pool, schema });
    const queue = createPostgresDeliveryQueue({ client: pool, schema });
    expect(await endpoints.get(old.id)).toEqual(old);
    expect((await endpoints.list({ limit: 10, tenant: null })).map((e) => e.id)).toEqual([old.id]);
    const event = createEvent({ type: "order.created", data: {} });
    expect((await queue.publish(event, { tenant: "acme" })).deliveryIds).toEqual([]);
    const [id] = (await queue.publish(event)).deliveryIds;
    expect((await queue.get(id as string))?.endpointId).toBe(old.id);
    // An endpoint of a tenant written by hand was never counted: deleting it and a counted one leaves the count at 0,
    // never below (the table refuses a negative count).
    const byHand = endpointFixture({ tenant: "acme" });
    await pool.query(
      `INSERT INTO "${schema}"."webhook_endpoints" (id, url, enabled_events, secrets, status, created_at, tenant)
       VALUES ($1, $2, $3, $4::jsonb, 'enabled', now(), 'acme')`,
      [byHand.id, byHand.url, byHand.enabledEvents, JSON.stringify(byHand.secrets)],
    );
    const counted = endpointFixture({ tenant: "acme" });
    expect(await endpoints.create(counted, { maxPerTenant: 1 })).toBe(true);
    expect(await endpoints.delete(byHand.id)).toBe(true);
    expect(await endpoints.delete(counted.id)).toBe(true);
    const { rows } = await pool.query(`SELECT endpoints FROM "${schema}"."webhook_tenants" WHERE tenant = 'acme'`);
    expect(rows).toEqual([{ endpoints: 0 }]);
    expect(await endpoints.create(endpointFixture({ tenant: "acme" }), { maxPerTenant: 1 })).toBe(true);
  });

  it("two workers claiming at once never get the same delivery (SKIP LOCKED)", async () => {
    const schema = await schemas.emptied();
    const endpoints = createPostgresEndpointStore({ client: pool, schema });
    const queue = createPostgresDeliveryQueue({ client: pool, schema });
    await endpoints.create(endpointFixture());
    await Promise.all(
      Array.from({ length: 60 }, (_, i) => queue.publish(createEvent({ type: "x.created", data: { i } }), { now: 0 })),
    );
    const batches = await Promise.all([1, 2, 3, 4].map(() => queue.claim({ limit: 20, now: 1, leaseMs: 60_000 })));
    const ids = batches.flat().map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(60);
  });

  it("claims and renews by writing the lease alone: HOT updates, no new index entries (issue 15)", async () => {
    // A table of its own: PGlite's one backend keeps earlier transactions' counts pending, read as this one's.
    const schema = await schemas.fresh();
    const table = `'"${schema}".webhook_deliveries'::regclass`;
    const { rows: options } = await pool.query(`SELECT reloptions FROM pg_class WHERE oid = ${table}`);
    expect((options[0] as { reloptions: string[] }).reloptions).toEqual(["fillfactor=80"]);
    const endpoints = createPostgresEndpointStore({ client: pool, schema });
    await endpoints.create(endpointFixture());
    const queue = createPostgresDeliveryQueue({ client: pool, schema });
    await queue.publish(createEvent({ type: "x.created", data: { hot: true } }), { now: 0 });
    // In one transaction, so the counts are this claim's and this renewal's: a row version that changes an indexed
    // column can never be HOT, whatever room its page has.
    const counts = await transaction(pool, async (tx) => {
      const inTx = queue.withClient(tx);
      const claimed = await inTx.claim({ limit: 10, now: 1, leaseMs: 60_000 });
      expect(await inTx.renew(claimed, 2, 60_000)).toEqual(claimed.map((c) => c.id));
      const { rows } = await tx.query(
        `SELECT n_tup_upd::int AS updated, n_tup_hot_upd::int AS hot FROM pg_stat_xact_user_tables WHERE relid = ${table}`,
      );
      return rows[0];
    });
    expect(counts).toEqual({ updated: 2, hot: 2 });
  });

  it("claims and completes with one plan per connection at any table size, and with any limit (issue 15)", async () => {
    const schema = await schemas.fresh();
    const endpoints = createPostgresEndpointStore({ client: pool, schema });
    const endpoint = endpointFixture();
    await endpoints.create(endpoint);
    // Enough rows that a plan expecting many claimed rows hashes the table rather than probing it.
    await pool.query(
      `INSERT INTO "${schema}".webhook_deliveries
         (id, event_id, event_type, endpoint_id, payload, created_at, status, attempts, next_attempt_at)
       SELECT 'dlv_' || g, 'evt_' || g, 'x.created', $1, '{}', to_timestamp(0), 'pending', 0, to_timestamp(0)
       FROM generate_series(1, 20000) g`,
      [endpoint.id],
    );
    await pool.query(`ANALYZE "${schema}".webhook_deliveries`);
    const queue = createPostgresDeliveryQueue({ client: pool, schema });
    // On one connection (a transaction), so its prepared statements are the ones counted.
    const { plans, large } = await transaction(pool, async (tx) => {
      const inTx = queue.withClient(tx);
      const claimed = [];
      for (let i = 0; i < 10; i++) {
        const claims = await inTx.claim({ limit: 8, now: 1_000, leaseMs: 60_000 });
        expect(claims).toHaveLength(8);
        claimed.push(claims[0] as ClaimedDelivery);
      }
      // One outcome at a time: batches of one.
      for (const claim of claimed) {
        const state = {
          ...claim.state,
          status: "delivered" as const,
          attempts: 1,
          nextAttemptAt: null,
          deliveredAt: 2_000,
        };
        expect(await inTx.complete(claim, state)).toBe(true);
      }
      const count = async (statement: string) => {
        const { rows } = await tx.query(
          `SELECT sum(generic_plans)::int AS generic, sum(custom_plans)::int AS custom FROM pg_prepared_statements
           WHERE name LIKE $1 AND strpos(statement, $2) > 0`,
          [`rw_dlv%${statement}%`, `"${schema}".`],
        );
        return rows[0];
      };
      const plans = { claim: await count("claim"), complete: await count("complete") };
      // Past the limits that get a statement of their own: the limit travels as a parameter.
      return { plans, large: await inTx.claim({ limit: 300, now: 1_000, leaseMs: 60_000 }) };
    });
    expect(large).toHaveLength(300);
    expect(new Set(large.map((claim) => claim.id)).size).toBe(300);
    // PostgreSQL plans a prepared statement afresh for its first five runs, then keeps its generic plan when that
    // is estimated no dearer. A limit or an array length it cannot see made every claim at this size, and every
    // small batch of outcomes, a fresh plan (0 generic of 10).
    if (backend.name === "postgres") {
      expect(plans).toEqual({ claim: { generic: 5, custom: 5 }, complete: { generic: 5, custom: 5 } });
    } else {
      const none = { generic: null, custom: null }; // PGlite runs statements unprepared
      expect(plans).toEqual({ claim: none, complete: none });
    }
  });

  it("claims a due delivery behind more waiting endpoints than a walk visits, within a few claims (regression: never claimed, the worker re-claiming in a loop)", async () => {
    const schema = await schemas.emptied();
    const T0 = 1_700_000_000_000;
    const queue = createPostgresDeliveryQueue({ client: pool, schema });
    const table = `"${schema}".webhook_deliveries`;
    // 25,000 endpoints each waiting for a retry in an hour: more than twice the 10,000 a walk visits each way.
    await pool.query(
      `INSERT INTO ${table} (id, event_id, event_type, endpoint_id, payload, created_at, status, attempts, next_attempt_at)
       SELECT 'dlv_w' || i, 'evt_w' || i, 'x.created', 'we_w' || lpad(i::text, 6, '0'), '{}',
         to_timestamp($1::float8 / 1000), 'failed', 1, to_timestamp($1::float8 / 1000 + 3600)
       FROM generate_series(1, 25000) i`,
      [T0],
    );
    const due = async (endpointId: string, n: number) => {
      await pool.query(
        `INSERT INTO ${table} (id, event_id, event_type, endpoint_id, payload, created_at, status, attempts, next_attempt_at)
         VALUES ($1, $1, 'x.created', $2, '{}', to_timestamp($3::float8 / 1000), 'pending', 0, to_timestamp($3::float8 / 1000))`,
        [`dlv_due_${n}`, endpointId, T0],
      );
      return `dlv_due_${n}`;
    };
    await pool.query(`ANALYZE ${table}`);
    const now = T0 + 1_000;
    // Claims until `id` comes, at most `claims` of them; how many it took.
    const claimsUntil = async (id: string, claims: number) => {
      for (let n = 1; n <= claims; n++) {
        const claimed = await queue.claim({ limit: 10, now, leaseMs: 60_000 });
        if (claimed.some((c) => c.id === id)) return n;
      }
      return Number.POSITIVE_INFINITY;
    };
    // Sorting after every waiting endpoint: the walk from the start stops 15,000 endpoints short of it.
    expect(await claimsUntil(await due("we_zzz", 1), 4)).toBeLessThanOrEqual(3);
    // One in the middle of the waiting endpoints, 10,000 past where the walk now starts.
    expect(await claimsUntil(await due("we_w020000_due", 2), 4)).toBeLessThanOrEqual(3);
    // Both are leased now: nothing else was due.
    expect(await queue.claim({ limit: 10, now, leaseMs: 60_000 })).toEqual([]);
  });

  describe("retention of ended deliveries and of the attempt log (retainTerminalMs)", () => {
    const T0 = 1_700_000_000_000;
    const DAY = 86_400_000;
    const delivered = { type: "attempt", result: { kind: "response", status: 200, durationMs: 1 } } as const;
    const failed = { type: "attempt", result: { kind: "response", status: 500, durationMs: 1 } } as const;

    async function setup(options: { retainTerminalMs?: number } = {}) {
      const schema = await schemas.emptied();
      let now = T0;
      const endpoints = createPostgresEndpointStore({ client: pool, schema });
      const queue = createPostgresDeliveryQueue({ client: pool, schema, now: () => now, ...options });
      const endpoint = endpointFixture({ enabledEvents: ["r.*"] });
      await endpoints.create(endpoint);
      const count = async (table: string, where = "true") =>
        Number(
          (
            (await pool.query(`SELECT count(*) AS n FROM "${schema}".${table} WHERE ${where}`)).rows[0] as {
              n: unknown;
            }
          ).n,
        );
      // Publishes `n` events and stores an attempt for each at the current time (delivered unless `event` says otherwise):
      // the events at once, the outcomes one at a time, since the purge counts outcomes by the batch they are stored in.
      const attemptMany = async (n: number, event = delivered as typeof delivered | typeof failed, lineAt?: number) => {
        const published = await Promise.all(
          Array.from({ length: n }, (_, i) =>
            queue.publish(createEvent({ type: "r.done", data: { i }, now }), { now }),
          ),
        );
        const ids = published.flatMap((result) => result.deliveryIds);
        const claims = (await queue.claim({ limit: 1_000, now, leaseMs: 60_000 })).filter((c) => ids.includes(c.id));
        expect(claims).toHaveLength(n);
        for (const claim of claims) {
          const state = transition(claim.state, event, now).state;
          const line = {
            deliveryId: claim.id,
            endpointId: endpoint.id,
            eventId: claim.eventId,
            attempt: 1,
            startedAt: lineAt ?? now,
            durationMs: 1,
            status: event.result.status,
            errorKind: null,
            response: "",
          };
          expect(await queue.complete(claim, state, line)).toBe(true);
        }
        return ids;
      };
      return {
        queue,
        endpoint,
        count,
        attemptMany,
        at: (ms: number) => {
          now = ms;
        },
        table: `"${schema}".webhook_deliveries`,
      };
    }

    it("deletes ended deliveries and log lines older than the retention as outcomes are stored, and nothing else", async () => {
      const t = await setup();
      const old = await t.attemptMany(100);
      const notDue = (
        await t.queue.publish(createEvent({ type: "r.later", data: {}, now: T0 }), { now: T0, delayMs: 30 * DAY })
      ).deliveryIds;
      expect(await t.count("webhook_deliveries")).toBe(101);
      t.at(T0 + 8 * DAY);
      // 36 outcomes since the last purge (at 64, which found nothing old): the next purge comes at 28 more.
      const fresh = await t.attemptMany(27);
      expect(await t.count("webhook_deliveries")).toBe(128);
      await t.attemptMany(1);
      expect(await t.count("webhook_deliveries")).toBe(29);
      expect(await t.count("webhook_attempts")).toBe(28);
      for (const id of old.slice(0, 5)) expect(await t.queue.get(id)).toBeUndefined();
      for (const id of [...fresh, ...notDue]) expect(await t.queue.get(id)).toBeDefined();
    });

    it("dates a parked delivery from when it was parked, and a row from before the migration from its last attempt", async () => {
      const t = await setup();
      const [parked, legacy] = (await t.attemptMany(2, failed)) as [string, string];
      t.at(T0 + 6 * DAY);
      for (const id of [parked, legacy]) {
        const stored = await t.queue.get(id);
        if (stored === undefined) throw new Error(`${id} not stored`);
        const park = transition(stored.state, { type: "endpoint_disabled" }, T0 + 6 * DAY).state;
        expect(await t.queue.update(id, ["failed", "pending"], park, T0 + 6 * DAY)).toBe(true);
      }
      // As if it had ended before migration delivery@7: no end recorded, so its last attempt (T0) dates it.
      await pool.query(`UPDATE ${t.table} SET ended_at = NULL WHERE id = $1`, [legacy]);
      t.at(T0 + 8 * DAY);
      await t.attemptMany(62); // 64 outcomes stored: a purge, keeping what ended after T0 + 1 day
      expect(await t.queue.get(parked)).toBeDefined();
      expect(await t.queue.get(legacy)).toBeUndefined();
      t.at(T0 + 14 * DAY);
      await t.attemptMany(64);
      expect(await t.queue.get(parked)).toBeUndefined();
      expect(await t.count("webhook_deliveries")).toBe(126);
    });

    it("pages the attempt log after a line the retention deleted: placed by its id, the older lines still kept", async () => {
      const t = await setup();
      t.at(T0 + 8 * DAY);
      await t.attemptMany(1); // line 1, still young at the purge below
      t.at(T0);
      await t.attemptMany(9); // lines 2 to 10, old by then
      const before = await t.queue.attempts({ endpointId: t.endpoint.id });
      expect(before).toHaveLength(10);
      const [line5, line1] = [before[5], before[9]] as [AttemptRecord, AttemptRecord];
      t.at(T0 + 8 * DAY);
      await t.attemptMany(54); // 64 outcomes stored: a purge, deleting the lines started at T0
      expect(await t.count("webhook_attempts")).toBe(55);
      expect(await t.count("webhook_attempts", `'att_' || seq = '${line5.id}'`)).toBe(0);
      const page = await t.queue.attempts({ endpointId: t.endpoint.id, startingAfter: line5.id });
      expect(page.map((line) => line.id)).toEqual([line1.id]);
      const [newest] = await t.queue.attempts({ endpointId: t.endpoint.id, limit: 1 });
      expect(
        await t.queue.attempts({
          endpointId: t.endpoint.id,
          deliveryId: newest?.deliveryId,
          startingAfter: line5.id,
        }),
      ).toEqual([]);
    });

    // Regression: the purge looked at the 256 lines from the oldest by sequence; a line dated ahead of the others (a
    // worker whose clock is ahead) stayed the oldest until its own time came, and every line 256 past it was kept.
    it("deletes the expired log lines behind a line dated ahead, in bounded batches", async () => {
      const t = await setup();
      t.at(T0 + 3_650 * DAY);
      await t.attemptMany(1);
      t.at(T0);
      await t.attemptMany(300); // 301 outcomes: purges at 64 to 256, which found nothing old; 45 towards the next
      t.at(T0 + 8 * DAY);
      await t.attemptMany(19); // a purge: at most 256 lines
      expect(await t.count("webhook_attempts")).toBeGreaterThanOrEqual(1 + 300 - 256 + 19);
      await t.attemptMany(64); // the next one: the rest, past the line dated ahead
      expect(await t.count("webhook_attempts")).toBe(1 + 19 + 64);
    });

    // Regression: the lines' cut was counted back from the newest line of the batch alone, so a line dated ahead (a
    // worker whose clock is years ahead) in the batch that purged deleted lines well within the retention.
    it("deletes no line within the retention when the purging batch holds a line dated ahead of the queue's clock", async () => {
      const t = await setup();
      await t.attemptMany(63);
      await t.attemptMany(1, delivered, T0 + 3_650 * DAY); // the 64th outcome: a purge
      expect(await t.count("webhook_attempts")).toBe(64);
    });

    it("keeps everything with retainTerminalMs: Infinity, and refuses a negative or missing number", async () => {
      const t = await setup({ retainTerminalMs: Number.POSITIVE_INFINITY });
      await t.attemptMany(70);
      t.at(T0 + 3_650 * DAY);
      await t.attemptMany(70);
      expect(await t.count("webhook_deliveries")).toBe(140);
      expect(await t.count("webhook_attempts")).toBe(140);
      for (const retainTerminalMs of [-1, Number.NaN, "7d" as never]) {
        expect(() => createPostgresDeliveryQueue({ client: pool, retainTerminalMs })).toThrow(/retainTerminalMs/);
      }
    });
  });

  describe("the endpoint store's modify (compare and set on the row version)", () => {
    it("writes no row version for an empty patch", async () => {
      const schema = await schemas.emptied();
      const endpoints = createPostgresEndpointStore({ client: pool, schema });
      const e = endpointFixture();
      await endpoints.create(e);
      const version = async () =>
        (await pool.query(`SELECT xmin::text AS v FROM "${schema}".webhook_endpoints WHERE id = $1`, [e.id])).rows[0];
      const before = await version();
      expect(await endpoints.modify(e.id, () => ({ description: undefined }))).toEqual(e);
      expect(await version()).toEqual(before);
      await endpoints.modify(e.id, () => ({ description: "written" }));
      expect(await version()).not.toEqual(before);
    });

    it("keeps every change made at once on one transaction's connection after a write in it (regression: xmin alone is the transaction's after its first write)", async () => {
      const schema = await schemas.emptied();
      const e = endpointFixture();
      await createPostgresEndpointStore({ client: pool, schema }).create(e);
      const keys = ["a", "b", "c", "d"];
      await transaction(pool, async (tx) => {
        const endpoints = createPostgresEndpointStore({ client: tx, schema });
        await endpoints.update(e.id, { description: "written in the transaction" });
        await Promise.all(
          keys.map((key) => endpoints.modify(e.id, (current) => ({ metadata: { ...current.metadata, [key]: key } }))),
        );
      });
      const stored = await createPostgresEndpointStore({ client: pool, schema }).get(e.id);
      expect(stored?.metadata).toEqual({ a: "a", b: "b", c: "c", d: "d" });
    });
  });

  describe("the endpoint store's deleteChecked (compare and delete on the row version)", () => {
    // `client`, with `write` run once just before the first conditional delete is sent: after the store read the row
    // and checked it, before it deletes (deterministic, where two connections would race).
    const writingBeforeDelete = (client: SqlClient, write: () => Promise<unknown>): SqlClient => {
      let pending: (() => Promise<unknown>) | undefined = write;
      return {
        async query(text, values) {
          if (pending !== undefined && /DELETE FROM .* AND xmin = /s.test(text)) {
            const run = pending;
            pending = undefined;
            await run();
          }
          return client.query(text, values);
        },
      };
    };

    // On the pool, and on one transaction's connection after a write in it (xmin alone would be the transaction's
    // for both versions of the row: ctid tells them apart, as in modify).
    describe.each(["pool", "transaction"] as const)("on a %s", (on) => {
      // Runs `work` with the endpoint store whose first conditional delete of `id` finds its description written over.
      const interleaved = async <T>(
        schema: string,
        id: string,
        work: (endpoints: ReturnType<typeof createPostgresEndpointStore>) => Promise<T>,
      ): Promise<T> => {
        const run = async (client: SqlClient) => {
          const plain = createPostgresEndpointStore({ client, schema });
          // A write in this transaction first, so that the row's xmin is the transaction's before and after.
          if (on === "transaction") await plain.update(id, { description: "read" });
          const write = () => plain.update(id, { description: "written in between" });
          return work(createPostgresEndpointStore({ client: writingBeforeDelete(client, write), schema }));
        };
        return on === "pool" ? run(pool) : transaction(pool, (tx) => run(tx));
      };

      it("checks again what a write landing between its read and its delete left: refused, nothing deleted", async () => {
        const schema = await schemas.emptied();
        const e = endpointFixture({ description: "read" });
        await createPostgresEndpointStore({ client: pool, schema }).create(e);
        const seen: string[] = [];
        await interleaved(schema, e.id, async (endpoints) => {
          await expect(
            endpoints.deleteChecked(e.id, (current) => {
              seen.push(current.description);
              if (current.description !== "read") throw new Error("changed since read");
            }),
          ).rejects.toThrow("changed since read");
        });
        expect(seen).toEqual(["read", "written in between"]);
        const stored = await createPostgresEndpointStore({ client: pool, schema }).get(e.id);
        expect(stored?.description).toBe("written in between");
      });

      it("deletes the row as the write left it when the check holds for it too, once", async () => {
        const schema = await schemas.emptied();
        const e = endpointFixture({ tenant: "acme", description: "read" });
        await createPostgresEndpointStore({ client: pool, schema }).create(e, { maxPerTenant: 1 });
        const seen: string[] = [];
        await interleaved(schema, e.id, async (endpoints) => {
          expect(await endpoints.deleteChecked(e.id, (current) => void seen.push(current.description))).toBe(true);
        });
        expect(seen).toEqual(["read", "written in between"]);
        const endpoints = createPostgresEndpointStore({ client: pool, schema });
        expect(await endpoints.get(e.id)).toBeUndefined();
        // Its place in the tenant's count freed once: the next creation fits, the one after does not.
        expect(await endpoints.create(endpointFixture({ tenant: "acme" }), { maxPerTenant: 1 })).toBe(true);
        expect(await endpoints.create(endpointFixture({ tenant: "acme" }), { maxPerTenant: 1 })).toBe(false);
      });
    });
  });

  it("reads one delivery's attempts by its own index, not back through the endpoint's whole log", async () => {
    const schema = await schemas.emptied();
    const queue = createPostgresDeliveryQueue({ client: pool, schema });
    const table = `"${schema}".webhook_attempts`;
    // A busy endpoint's log: the old delivery's two lines first, then 20,000 lines of later deliveries.
    await pool.query(
      `INSERT INTO ${table} (delivery_id, endpoint_id, event_id, attempt, started_at, duration_ms, status)
       SELECT CASE WHEN g <= 2 THEN 'dlv_old' ELSE 'dlv_' || g END, 'we_busy', 'evt_' || g, 1, now(), 5, 500
       FROM generate_series(1, 20002) g`,
    );
    await pool.query(`ANALYZE ${table}`);
    const lines = await queue.attempts({ endpointId: "we_busy", deliveryId: "dlv_old" });
    expect(lines.map((line) => line.deliveryId)).toEqual(["dlv_old", "dlv_old"]);
    expect(await queue.attempts({ endpointId: "we_other", deliveryId: "dlv_old" })).toEqual([]);
    expect(await queue.attempts({ endpointId: "we_busy", limit: 3 })).toHaveLength(3);
    const { rows } = await pool.query(
      `EXPLAIN SELECT * FROM ${table} WHERE delivery_id = 'dlv_old' AND endpoint_id = 'we_busy' ORDER BY seq DESC LIMIT 100`,
    );
    expect(rows.map((row) => String((row as { "QUERY PLAN": unknown })["QUERY PLAN"])).join("\n")).toContain(
      "webhook_attempts_delivery",
    );
  });

  describe("the parked deliveries' index (migration delivery@13)", () => {
    // One endpoint's deliveries: 5 parked while it was disabled (the oldest), 20,000 exhausted by their attempts,
    // then 5 parked again (the newest), a second apart.
    async function parkedBehind(schema: string) {
      await pool.query(
        `INSERT INTO "${schema}".webhook_deliveries
           (id, event_id, event_type, endpoint_id, payload, created_at, status, attempts, last_error_kind)
         SELECT 'dlv_' || lpad(g::text, 6, '0'), 'evt_' || g, 'r.created', 'we_busy', '{}', to_timestamp(g),
           'exhausted', 1, CASE WHEN g <= 5 OR g > 20005 THEN 'endpoint_disabled' ELSE 'http_status' END
         FROM generate_series(1, 20010) g`,
      );
      await pool.query(`ANALYZE "${schema}".webhook_deliveries`);
    }
    const parked = { status: ["exhausted"], lastErrorKind: "endpoint_disabled" } as const;
    const ids = (page: readonly { id: string }[]) => page.map((d) => d.id);
    const dlv = (...n: number[]) => n.map((g) => `dlv_${String(g).padStart(6, "0")}`);

    it("reads a page of parked deliveries from it, only matching rows, behind 20,000 exhausted otherwise (regression: read every exhausted one)", async () => {
      const schema = await schemas.emptied();
      await parkedBehind(schema);
      // The queue's own statements, run again under EXPLAIN ANALYZE.
      const listed: { text: string; values: unknown[] }[] = [];
      const client: SqlClient = {
        query: (text: string, values?: unknown[]) => {
          listed.push({ text, values: values ?? [] });
          return pool.query(text, values);
        },
      };
      const queue = createPostgresDeliveryQueue({ client, schema });
      expect(ids(await queue.list("we_busy", { ...parked, limit: 3 }))).toEqual(dlv(20010, 20009, 20008));
      const after = dlv(20006)[0];
      expect(ids(await queue.list("we_busy", { ...parked, since: 0, limit: 10, startingAfter: after }))).toEqual(
        dlv(5, 4, 3, 2, 1),
      );
      expect(listed).toHaveLength(2);
      // The plan for these values, and the generic one a prepared statement may come to (so the index's predicate
      // is written out in the statement: its parameters do not imply it).
      const literal = (value: unknown): string =>
        value === null
          ? "NULL"
          : Array.isArray(value)
            ? `ARRAY[${value.map(literal).join(", ")}]::text[]`
            : typeof value === "number"
              ? String(value)
              : `'${String(value).replaceAll("'", "''")}'`;
      const runs = ["auto", "force_generic_plan"].flatMap((mode) => listed.map((query, i) => ({ ...query, i, mode })));
      for (const { text, values, i, mode } of runs) {
        const { rows } = await transaction(pool, async (tx) => {
          await tx.query(`SET LOCAL plan_cache_mode = ${mode}`);
          await tx.query(`PREPARE parked_page AS ${text}`);
          try {
            const args = values.map(literal).join(", ");
            return await tx.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE parked_page(${args})`);
          } finally {
            await tx.query("DEALLOCATE parked_page");
          }
        });
        const plan = rows.map((row) => String((row as { "QUERY PLAN": unknown })["QUERY PLAN"])).join("\n");
        expect(plan, plan).toMatch(
          /Index Scan using webhook_deliveries_parked on webhook_deliveries \(actual rows=\d+/,
        );
        // Only parked rows, none sorted after reading them all: with these values, only the rows of the page; in the
        // generic plan the cursor is a filter, which passes over the parked ones newer than it (5 here), no others.
        expect(plan, plan).not.toMatch(/Sort|Seq Scan/);
        const removed = Number(plan.match(/Rows Removed by Filter: (\d+)/)?.[1] ?? 0);
        expect(removed, plan).toBe(mode === "auto" || i === 0 ? 0 : 5);
        expect(plan.match(/parked on webhook_deliveries \(actual rows=(\d+)/)?.[1], plan).toBe(i === 0 ? "3" : "5");
      }
    });

    it("is added to a table that has parked deliveries, which are then listed from it as before", async () => {
      const schema = await schemas.fresh((name) =>
        deliveryMigrations({ schema: name }).filter((migration) => migration.id !== "delivery@13"),
      );
      await parkedBehind(schema);
      const queue = createPostgresDeliveryQueue({ client: pool, schema });
      const before = ids(await queue.list("we_busy", { ...parked, limit: 20 }));
      expect(before).toEqual(dlv(20010, 20009, 20008, 20007, 20006, 5, 4, 3, 2, 1));
      expect(await migrate(pool, deliveryMigrations({ schema }))).toEqual([`${schema}:delivery@13`]);
      const { rows } = await pool.query(
        "SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'webhook_deliveries_parked'",
        [schema],
      );
      expect(String((rows[0] as { indexdef: unknown }).indexdef)).toContain("(endpoint_id, created_at DESC, id DESC)");
      expect(ids(await queue.list("we_busy", { ...parked, limit: 20 }))).toEqual(before);
    });
  });

  describe("an event id per tenant (migrations delivery@14 and @15)", () => {
    // The publish's statement and values, as the queue sends them.
    function recorded(): { client: SqlClient; sent: { text: string; values: unknown[] }[] } {
      const sent: { text: string; values: unknown[] }[] = [];
      const client: SqlClient = {
        query: (text: string, values?: unknown[]) => {
          sent.push({ text, values: values ?? [] });
          return pool.query(text, values);
        },
      };
      return { client, sent };
    }

    it("finds a published id of the tenant with one probe of webhook_deliveries_event, behind 20,000 other deliveries", async () => {
      const schema = await schemas.emptied();
      await pool.query(
        `INSERT INTO "${schema}".webhook_deliveries (id, event_id, event_type, endpoint_id, payload, created_at, status,
           attempts, tenant)
         SELECT 'dlv_' || g, 'evt_' || (g % 10000), 'p.created', 'we_' || (g % 7), '{}', now(), 'delivered', 1,
           CASE WHEN g % 3 = 0 THEN '' ELSE 'tenant_' || (g % 11) END
         FROM generate_series(1, 20000) g`,
      );
      await pool.query(`ANALYZE "${schema}".webhook_deliveries`);
      const endpoints = createPostgresEndpointStore({ client: pool, schema });
      await endpoints.create(endpointFixture({ tenant: "acme", enabledEvents: ["p.*"] }));
      const { client, sent } = recorded();
      const queue = createPostgresDeliveryQueue({ client, schema });
      const event = createEvent({ id: "evt_7", type: "p.created", data: {} });
      expect((await queue.publish(event, { tenant: "acme" })).deliveryIds).toHaveLength(1);
      expect((await queue.publish(event, { tenant: "acme" })).deliveryIds).toEqual([]);
      const [{ text, values }] = sent as [{ text: string; values: unknown[] }];
      // EXPLAIN alone plans the INSERT without running it.
      const { rows } = await transaction(pool, async (tx) => {
        await tx.query(`PREPARE publish_once AS ${text}`);
        try {
          const args = values.map((v) =>
            Array.isArray(v) ? `ARRAY[${v.map((x) => `'${x}'`).join(", ")}]` : v === null ? "NULL" : `'${v}'`,
          );
          return await tx.query(`EXPLAIN (COSTS OFF) EXECUTE publish_once(${args.join(", ")})`);
        } finally {
          await tx.query("DEALLOCATE publish_once");
        }
      });
      const plan = rows.map((row) => String((row as { "QUERY PLAN": unknown })["QUERY PLAN"])).join("\n");
      // One range of the index, the id's entries (here 2, of other tenants), however the planner reads them.
      expect(plan.match(/Scan using webhook_deliveries_event/g), plan).toHaveLength(1);
      expect(plan, plan).toMatch(/Index Cond: \(event_id = 'evt_7'::text\)/);
      expect(plan, plan).not.toMatch(/Seq Scan on webhook_deliveries|BitmapOr/);
    });

    it("keeps a delivery stored before them holding its id in every tenant, and adds the key while the old one stands (a rolling deploy)", async () => {
      const schema = await schemas.fresh((name) =>
        // As the release before delivery@14 left them: the later migrations not applied either.
        deliveryMigrations({ schema: name }).filter((m) => Number(m.id.slice("delivery@".length)) < 14),
      );
      const endpoints = createPostgresEndpointStore({ client: pool, schema });
      const acme = endpointFixture({ tenant: "acme", enabledEvents: ["r.*"] });
      const globex = endpointFixture({ tenant: "globex", enabledEvents: ["r.*"] });
      const all = endpointFixture({ allTenants: true, enabledEvents: ["r.*"] });
      for (const e of [acme, globex, all]) await endpoints.create(e);
      // As the release before delivery@14 published it: no tenant column.
      const oldPublish = (eventId: string, endpointId: string) =>
        pool.query(
          `INSERT INTO "${schema}".webhook_deliveries (id, event_id, event_type, endpoint_id, payload, created_at,
             status, attempts, next_attempt_at)
           VALUES ('dlv_' || md5(random()::text), $1, 'r.created', $2, '{}', now(), 'pending', 0, now())
           ON CONFLICT (event_id, endpoint_id) DO NOTHING`,
          [eventId, endpointId],
        );
      await oldPublish("evt_old", acme.id);
      const only = deliveryMigrations({ schema }).filter((m) => m.id === "delivery@14");
      expect(await migrate(pool, only)).toEqual([`${schema}:delivery@14`]);
      // The release before still publishes on these tables.
      await oldPublish("evt_during", acme.id);
      expect((await oldPublish("evt_during", acme.id)).rowCount).toBe(0);
      const queue = createPostgresDeliveryQueue({ client: pool, schema });
      const publish = async (id: string, tenant: string) =>
        (await queue.publish(createEvent({ id, type: "r.created", data: {} }), { tenant })).deliveryIds.length;
      // Rows of the release before hold their id in every scope, as they did.
      expect(await publish("evt_old", "globex")).toBe(0);
      expect(await publish("evt_during", "acme")).toBe(0);
      expect(await publish("evt_new", "acme")).toBe(2);
      // While the old key stands, the endpoint of every tenant gets an id once, as before; no unique violation.
      expect(await publish("evt_new", "globex")).toBe(1);
      expect(await migrate(pool, deliveryMigrations({ schema }))).toEqual([
        `${schema}:delivery@15`,
        `${schema}:delivery@16`,
      ]);
      expect(await publish("evt_next", "acme")).toBe(2);
      expect(await publish("evt_next", "globex")).toBe(2);
      expect(await publish("evt_next", "globex")).toBe(0);
      const { rows } = await pool.query(
        "SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'webhook_deliveries' ORDER BY 1",
        [schema],
      );
      const names = rows.map((row) => (row as { indexname: string }).indexname);
      expect(names).toContain("webhook_deliveries_event");
      expect(names).not.toContain("webhook_deliveries_event_id_endpoint_id_key");
    });
  });

  it("exports its migration as SQL for other migration tools, and refuses an unsafe schema name", () => {
    expect(migrationSql(deliveryMigrations())).toContain('CREATE TABLE IF NOT EXISTS "public"."webhook_deliveries"');
    expect(() => deliveryMigrations({ schema: 'x"; DROP TABLE y; --' })).toThrow(TypeError);
    expect(() => createPostgresDeliveryQueue({ client: {} as never })).toThrow(TypeError);
  });
});
