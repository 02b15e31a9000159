import { afterEach, describe, expect, it, vi } from "vitest";
import { type SqlDatabase, transaction } from "../../../../src/postgres/index";
import { createEvent } from "../../../../src/webhooks/delivery/event";
import { createDeliveryWorker } from "../../../../src/webhooks/delivery/node/index";
import { listenOnChannel } from "../../../../src/webhooks/delivery/postgres/channel-listener";
import { deliveryChannel } from "../../../../src/webhooks/delivery/postgres/delivery-notifications";
import {
  createPostgresDeliveryQueue,
  createPostgresEndpointStore,
  type PostgresDeliveryQueue,
} from "../../../../src/webhooks/delivery/postgres/index";
import { type Backend, databases, onServer } from "../../../support/databases";
import { fakeDispatcher } from "../node/fake-dispatcher";
import { endpointFixture } from "../store-contract";
import { channelListeners, throwingListen, twoProcesses as twoHandles } from "./two-processes";

// Every worker here polls once an hour: a delivery that arrives within a test's time-out was claimed because the queue
// heard of it, not found by a poll.
const HOUR = 3_600_000;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

// Two processes' handles on one migrated schema, and an endpoint that receives every event.
async function twoProcesses(backend: Backend) {
  const { schema, writerDb, watcherDb } = await twoHandles(backend, cleanups, "wh_due");
  const endpoints = createPostgresEndpointStore({ client: writerDb, schema, listen: false });
  const endpoint = endpointFixture();
  await endpoints.create(endpoint);
  return { schema, endpoint, publisherDb: writerDb, workerDb: watcherDb };
}

const event = (type = "order.created") => createEvent({ type, data: { n: Math.random() } });

// What the queue's channel carries, as another process hears it: the payloads, in commit order. Waits until it listens.
async function channelOf(db: SqlDatabase, schema: string) {
  const heard: string[] = [];
  const stop = listenOnChannel(db, deliveryChannel(schema), (payload) => heard.push(payload));
  if (stop === undefined) throw new Error("not listened on");
  cleanups.push(stop);
  let n = 0;
  const mark = async () => {
    const marker = `marker ${n++}`;
    await db.query("SELECT pg_notify($1, $2)", [deliveryChannel(schema), marker]);
    return marker;
  };
  await vi.waitFor(
    async () => {
      const marker = await mark();
      expect(heard).toContain(marker);
    },
    { timeout: 10_000, interval: 20 },
  );
  /** The notifications `write` made: what arrived between its start and a marker notified after it. */
  const notifiedBy = async (write: () => Promise<unknown>): Promise<string[]> => {
    const before = await mark();
    await write();
    const after = await mark();
    await vi.waitFor(() => expect(heard).toContain(after), { timeout: 10_000, interval: 5 });
    return heard.slice(heard.indexOf(before) + 1, heard.indexOf(after));
  };
  return { heard, notifiedBy };
}

// Waits until `queue`'s subscribers are told through its listening connection: `publisher` publishes until one is.
async function subscribed(queue: PostgresDeliveryQueue, publisher: PostgresDeliveryQueue) {
  let told = 0;
  const stop = queue.subscribe?.(() => void told++);
  if (stop === undefined) throw new Error("the queue has no subscribe");
  cleanups.push(stop);
  await vi.waitFor(
    async () => {
      await publisher.publish(event("probe.created"));
      expect(told).toBeGreaterThan(0);
    },
    { timeout: 10_000, interval: 20 },
  );
  return { told: () => told, stop };
}

for (const backend of databases()) {
  describe(`the PostgreSQL delivery queue's subscribe across processes (${backend.name})`, () => {
    it("notifies another process of a publish at its commit, once per transaction, and not when rolled back or inserting nothing", async () => {
      const { schema, publisherDb, workerDb } = await twoProcesses(backend);
      const publisher = createPostgresDeliveryQueue({ client: publisherDb, schema, listen: false, notifyEveryMs: 0 });
      const { notifiedBy } = await channelOf(workerDb, schema);
      expect(await notifiedBy(() => publisher.publish(event()))).toEqual(["due"]);
      // In the caller's transaction: told at its commit, once however many it published (PostgreSQL folds a
      // transaction's notifications of one channel and payload into one).
      const committed = () =>
        transaction(publisherDb, async (tx) => {
          await publisher.withClient(tx).publish(event());
          await publisher.withClient(tx).publish(event());
        });
      expect(await notifiedBy(committed)).toEqual(["due"]);
      const rolledBack = () =>
        transaction(publisherDb, async (tx) => {
          await publisher.withClient(tx).publish(event());
          throw new Error("rolled back");
        }).catch(() => {});
      expect(await notifiedBy(rolledBack)).toEqual([]);
      // The same event again inserts nothing, and so tells nothing.
      const once = event();
      await publisher.publish(once);
      expect(await notifiedBy(() => publisher.publish(once))).toEqual([]);
      // notify: false, for a transaction to PREPARE: its publish is not told.
      const silent = createPostgresDeliveryQueue({ client: publisherDb, schema, listen: false, notify: false });
      expect(await notifiedBy(() => silent.publish(event()))).toEqual([]);
    });

    it("notifies one publish per notifyEveryMs, across the queues of its withClient", async () => {
      const { schema, publisherDb, workerDb } = await twoProcesses(backend);
      const publisher = createPostgresDeliveryQueue({
        client: publisherDb,
        schema,
        listen: false,
        notifyEveryMs: HOUR,
      });
      const { notifiedBy } = await channelOf(workerDb, schema);
      const publishes = async () => {
        await publisher.publish(event());
        await publisher.publish(event());
        await transaction(publisherDb, (tx) => publisher.withClient(tx).publish(event()));
      };
      expect(await notifiedBy(publishes)).toEqual(["due"]);
      // Nor does a later one within the window.
      expect(await notifiedBy(() => publisher.publish(event()))).toEqual([]);
    });

    it("tells its subscribers what another process publishes, through one listening connection", async () => {
      const { schema, publisherDb, workerDb } = await twoProcesses(backend);
      const publisher = createPostgresDeliveryQueue({ client: publisherDb, schema, listen: false, notifyEveryMs: 0 });
      const queue = createPostgresDeliveryQueue({ client: workerDb, schema });
      const first = await subscribed(queue, publisher);
      let second = 0;
      cleanups.push(queue.subscribe?.(() => void second++) ?? (() => {}));
      const before = first.told();
      await publisher.publish(event());
      await vi.waitFor(() => expect([first.told() > before, second > 0]).toEqual([true, true]), { timeout: 10_000 });
    });

    it("notifies a manual retry (an update to a scheduled state), not an update to a final one", async () => {
      const { schema, publisherDb, workerDb } = await twoProcesses(backend);
      const publisher = createPostgresDeliveryQueue({ client: publisherDb, schema, listen: false, notifyEveryMs: 0 });
      const { notifiedBy } = await channelOf(workerDb, schema);
      const [id] = (await publisher.publish(event())).deliveryIds as [string];
      const state = (await publisher.get(id))?.state;
      if (state === undefined) throw new Error("no delivery");
      const exhausted = { ...state, status: "exhausted" as const, nextAttemptAt: null };
      expect(await notifiedBy(() => publisher.update(id, ["pending"], exhausted))).toEqual([]);
      const retried = { ...state, nextAttemptAt: Date.now() };
      expect(await notifiedBy(() => publisher.update(id, ["exhausted"], retried))).toEqual(["due"]);
      // An update that finds nothing to change tells nothing.
      expect(await notifiedBy(() => publisher.update(id, ["exhausted"], retried))).toEqual([]);
    });

    it("a worker claims what another process publishes at once, though its poll is an hour away", async () => {
      const { schema, publisherDb, workerDb } = await twoProcesses(backend);
      const publisher = createPostgresDeliveryQueue({ client: publisherDb, schema, listen: false, notifyEveryMs: 0 });
      const queue = createPostgresDeliveryQueue({ client: workerDb, schema });
      const endpoints = createPostgresEndpointStore({ client: workerDb, schema, listen: false });
      const fake = fakeDispatcher();
      const worker = createDeliveryWorker({ queue, endpoints, dispatcher: fake.dispatcher, pollIntervalMs: HOUR });
      cleanups.push(() => worker.stop());
      worker.start();
      // The worker's subscription and the test's share one listening connection: once the test's hears, so does it.
      await subscribed(queue, publisher);
      const { deliveryIds } = await publisher.publish(event());
      await vi.waitFor(
        async () => expect((await queue.get(deliveryIds[0] as string))?.state.status).toBe("delivered"),
        { timeout: 10_000, interval: 10 },
      );
    });

    it("a delivery a stopping worker hands back goes to another process's worker at once", async () => {
      const { schema, endpoint, publisherDb, workerDb } = await twoProcesses(backend);
      const stoppingQueue = createPostgresDeliveryQueue({ client: publisherDb, schema, notifyEveryMs: 0 });
      const endpoints = createPostgresEndpointStore({ client: publisherDb, schema, listen: false });
      const hanging = fakeDispatcher(() => true);
      const stopping = createDeliveryWorker({
        queue: stoppingQueue,
        endpoints,
        dispatcher: hanging.dispatcher,
        pollIntervalMs: HOUR,
        stopGraceMs: 0,
      });
      cleanups.push(() => stopping.stop());
      stopping.start();
      const [id] = (await stoppingQueue.publish(event())).deliveryIds as [string];
      stopping.wake();
      await vi.waitFor(() => expect(hanging.sentTo(new URL(endpoint.url).host)).toBe(1), { timeout: 10_000 });
      // The other worker has claimed nothing and sleeps for an hour, listening.
      const queue = createPostgresDeliveryQueue({ client: workerDb, schema });
      const fake = fakeDispatcher();
      const other = createDeliveryWorker({ queue, endpoints, dispatcher: fake.dispatcher, pollIntervalMs: HOUR });
      cleanups.push(() => other.stop());
      other.start();
      await subscribed(
        queue,
        createPostgresDeliveryQueue({ client: publisherDb, schema, listen: false, notifyEveryMs: 0 }),
      );
      await stopping.stop();
      // Handed back without an attempt counted, and delivered by the other worker.
      await vi.waitFor(async () => expect((await queue.get(id))?.state.status).toBe("delivered"), {
        timeout: 10_000,
        interval: 10,
      });
      expect((await queue.get(id))?.state.attempts).toBe(1);
    });
  });
}

describe("the PostgreSQL delivery queue's listen and notify options", () => {
  it("refuses options it cannot use, naming them", () => {
    const client = { query: () => Promise.reject(new Error("not run")) };
    const make = (options: object) => () => createPostgresDeliveryQueue({ client, ...options });
    expect(make({ listen: { retryMs: 0 } })).toThrow(/createPostgresDeliveryQueue: listen\.retryMs/);
    expect(make({ listen: { onError: "log" } })).toThrow(/listen\.onError/);
    expect(make({ listen: "yes" })).toThrow(/listen must be/);
    expect(make({ notify: "no" })).toThrow(/createPostgresDeliveryQueue: notify must be a boolean/);
    expect(make({ listen: false, notify: false })).not.toThrow();
  });

  it("a single client is not listened on: subscribe still returns what unsubscribes", () => {
    const client = { query: () => Promise.reject(new Error("not run")) };
    const queue = createPostgresDeliveryQueue({ client });
    const stop = queue.subscribe?.(() => {});
    expect(typeof stop).toBe("function");
    stop?.();
  });
});

onServer("the PostgreSQL delivery queue's listening connection, on a server", () => {
  const server = databases().find((backend) => backend.name === "postgres") as Backend;
  const listening = channelListeners;

  it("a worker's endpoint store and queue on one pool listen on one connection, closed with the last listen", async () => {
    const { schema, publisherDb, workerDb } = await twoProcesses(server);
    const queue = createPostgresDeliveryQueue({ client: workerDb, schema });
    const endpoints = createPostgresEndpointStore({ client: workerDb, schema });
    const worker = createDeliveryWorker({ queue, endpoints, dispatcher: fakeDispatcher().dispatcher });
    cleanups.push(() => worker.stop());
    worker.start();
    // A listen of the test's joins the pool's connection: the worker's listens are on it by the time it hears.
    const publisher = createPostgresDeliveryQueue({ client: publisherDb, schema, listen: false, notifyEveryMs: 0 });
    const other = await subscribed(createPostgresDeliveryQueue({ client: workerDb, schema }), publisher);
    const heard: string[] = [];
    const unwatch = endpoints.watch?.((id) => heard.push(id));
    const written = endpointFixture();
    await createPostgresEndpointStore({ client: publisherDb, schema, listen: false }).create(written);
    await vi.waitFor(() => expect(heard).toContain(written.id), { timeout: 10_000 });
    expect(await listening(publisherDb, schema)).toHaveLength(1);
    await worker.stop();
    unwatch?.();
    expect(await listening(publisherDb, schema)).toHaveLength(1);
    other.stop();
    await vi.waitFor(async () => expect(await listening(publisherDb, schema)).toEqual([]), { timeout: 10_000 });
  });

  it("is one connection outside the pool for every subscriber, opened again after a loss (onError, subscribers told), closed with the last", async () => {
    const { schema, publisherDb, workerDb } = await twoProcesses(server);
    const errors: Error[] = [];
    const queue = createPostgresDeliveryQueue({
      client: workerDb,
      schema,
      // One that throws ends nothing: the queue listens again all the same.
      listen: throwingListen(errors),
    });
    const publisher = createPostgresDeliveryQueue({ client: publisherDb, schema, listen: false, notifyEveryMs: 0 });
    const first = await subscribed(queue, publisher);
    const second = await subscribed(queue, publisher);
    const [pid, ...more] = await listening(publisherDb, schema);
    expect(more).toEqual([]);
    expect((workerDb as unknown as { totalCount: number }).totalCount).toBe(0);
    const told = first.told();
    await publisherDb.query("SELECT pg_terminate_backend($1)", [pid]);
    await vi.waitFor(() => expect(errors.length).toBeGreaterThan(0), { timeout: 10_000 });
    // Listening again, it tells every subscriber: what was published meanwhile was not heard.
    await vi.waitFor(async () => expect((await listening(publisherDb, schema)).length).toBe(1), { timeout: 10_000 });
    await vi.waitFor(() => expect(first.told()).toBeGreaterThan(told), { timeout: 10_000 });
    first.stop();
    expect(await listening(publisherDb, schema)).toHaveLength(1);
    second.stop();
    await vi.waitFor(async () => expect(await listening(publisherDb, schema)).toEqual([]), { timeout: 10_000 });
  });
});
