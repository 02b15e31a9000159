import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { EndpointStore } from "../../../../src/webhooks/delivery/endpoint-store";
import { createEvent } from "../../../../src/webhooks/delivery/event";
import { createDeliveryWorker, type DeliveryWorkerEvent } from "../../../../src/webhooks/delivery/node/index";
import {
  createPostgresDeliveryQueue,
  createPostgresEndpointStore,
} from "../../../../src/webhooks/delivery/postgres/index";
import { bundledOnce } from "../../../support/bundled-script";
import { type Backend, databases, onServer } from "../../../support/databases";
import { fakeDispatcher } from "../node/fake-dispatcher";
import { endpointFixture } from "../store-contract";
import { channelListeners, throwingListen, twoProcesses as twoHandles } from "./two-processes";

const T0 = 1_700_000_000_000;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

const twoProcesses = (backend: Backend) => twoHandles(backend, cleanups, "wh_notify");

// A store on each: the writer tells nothing (listen off), the watched one hears what the database notifies.
async function twoStores(backend: Backend) {
  const handles = await twoProcesses(backend);
  const { schema, writerDb, watcherDb } = handles;
  const writer = createPostgresEndpointStore({ client: writerDb, schema, listen: false });
  return { ...handles, writer, watched: createPostgresEndpointStore({ client: watcherDb, schema }) };
}

// Records what a watch hears, and waits until it listens: a probe endpoint is written until its id arrives.
async function watching(watched: EndpointStore, writer: EndpointStore) {
  const heard: string[] = [];
  const stop = watched.watch?.((id) => heard.push(id));
  if (stop === undefined) throw new Error("the store has no watch");
  cleanups.push(stop);
  const probe = endpointFixture();
  await writer.create(probe);
  let n = 0;
  await vi.waitFor(
    async () => {
      await writer.update(probe.id, { description: `probe ${n++}` });
      expect(heard).toContain(probe.id);
    },
    { timeout: 10_000, interval: 20 },
  );
  return { heard, stop, probe };
}

// What a write notified: a marker endpoint is created after it, and notifications arrive in commit order, so what came
// between the write and the marker's is the write's. The probe's late notifications (from `watching`) are left out.
async function heardAfter(heard: string[], writer: EndpointStore, probe: string, write: () => Promise<unknown>) {
  const from = heard.length;
  await write();
  const marker = endpointFixture();
  await writer.create(marker);
  await vi.waitFor(() => expect(heard.slice(from)).toContain(marker.id), { timeout: 10_000, interval: 10 });
  return heard.slice(from, heard.indexOf(marker.id, from)).filter((id) => id !== probe);
}

for (const backend of databases()) {
  describe(`the endpoint store's watch across processes (${backend.name}, migration delivery@16)`, () => {
    it("hears the endpoints another process creates, changes and deletes, and rows written by hand in SQL", async () => {
      const { schema, writerDb, writer, watched } = await twoStores(backend);
      const { heard, probe } = await watching(watched, writer);
      const endpoint = endpointFixture();
      expect(await heardAfter(heard, writer, probe.id, () => writer.create(endpoint))).toEqual([endpoint.id]);
      const disable = () =>
        writer.update(endpoint.id, { status: "disabled", disabledReason: "manual", disabledAt: T0 });
      expect(await heardAfter(heard, writer, probe.id, disable)).toEqual([endpoint.id]);
      const byHand = () =>
        writerDb.query(`UPDATE "${schema}".webhook_endpoints SET url = 'https://other.example/in' WHERE id = $1`, [
          endpoint.id,
        ]);
      expect(await heardAfter(heard, writer, probe.id, byHand)).toEqual([endpoint.id]);
      expect(await heardAfter(heard, writer, probe.id, () => writer.delete(endpoint.id))).toEqual([endpoint.id]);
    });

    it("does not hear the health check's writes (recordOutcome), which no cached copy depends on", async () => {
      const { schema, writerDb, writer, watched } = await twoStores(backend);
      const { heard, probe } = await watching(watched, writer);
      const endpoint = endpointFixture();
      expect(await heardAfter(heard, writer, probe.id, () => writer.create(endpoint))).toEqual([endpoint.id]);
      expect(await heardAfter(heard, writer, probe.id, () => writer.recordOutcome(endpoint.id, false, T0))).toEqual([]);
      expect(await heardAfter(heard, writer, probe.id, () => writer.recordOutcome(endpoint.id, true, T0))).toEqual([]);
      // A write that changes nothing a watcher reads is not a change either.
      const same = () =>
        writerDb.query(`UPDATE "${schema}".webhook_endpoints SET url = url WHERE id = $1`, [endpoint.id]);
      expect(await heardAfter(heard, writer, probe.id, same)).toEqual([]);
    });

    it("stops hearing once the last watch stops, and hears again when watched again", async () => {
      const { writer, watched } = await twoStores(backend);
      const first = await watching(watched, writer);
      const second = await watching(watched, writer);
      first.stop();
      // One watch left: the store still listens for it.
      const created = endpointFixture();
      expect(await heardAfter(second.heard, writer, second.probe.id, () => writer.create(created))).toContain(
        created.id,
      );
      second.stop();
      const before = second.heard.length;
      await writer.update(second.probe.id, { description: "after stop" });
      const third = await watching(watched, writer);
      expect(third.heard).toContain(third.probe.id);
      expect(second.heard).toHaveLength(before);
    });
  });
}

onServer("the endpoint store's watch across processes, on a server's connections", () => {
  const server = databases().find((backend) => backend.name === "postgres") as Backend;
  const script = bundledOnce(fileURLToPath(new URL("./fixtures/listen-then-end-pool.ts", import.meta.url)));

  const listeners = channelListeners;

  it("refuses a listen option it cannot use, naming it", () => {
    const client = { query: () => Promise.reject(new Error("not run")) };
    const make = (listen: unknown) => () => createPostgresEndpointStore({ client, listen: listen as false });
    expect(make({ retryMs: 0 })).toThrow(/listen\.retryMs/);
    expect(make({ retryMs: Number.NaN })).toThrow(TypeError);
    expect(make({ onError: "log" })).toThrow(/listen\.onError/);
    expect(make("yes")).toThrow(/listen must be/);
    expect(make({ retryMs: 10 })).not.toThrow();
  });

  it("listens on a connection of its own, outside the pool, and closes it when the watch stops", async () => {
    const { schema, writerDb, watcherDb, writer, watched } = await twoStores(server);
    const pool = watcherDb as unknown as { totalCount: number };
    const { stop } = await watching(watched, writer);
    expect(await listeners(writerDb, schema)).toHaveLength(1);
    expect(pool.totalCount).toBe(0);
    stop();
    await vi.waitFor(async () => expect(await listeners(writerDb, schema)).toEqual([]), { timeout: 10_000 });
  });

  it("never keeps a process alive: one that ends its pool without stopping the watch exits", async () => {
    const { schema } = await twoProcesses(server);
    const child = spawn(process.execPath, [await script()], {
      env: { ...process.env, SCHEMA: schema },
      stdio: ["ignore", "pipe", "inherit"],
    });
    cleanups.push(() => void (child.exitCode === null && child.kill("SIGKILL")));
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    // Not a time: the child either exits by itself or holds on until the test's time-out fails it.
    const code = await new Promise((resolve) => child.on("exit", resolve));
    expect([code, out.trim()]).toEqual([0, "ended"]);
  });

  it("listens again after its connection is lost, and says so to listen.onError and to each watch's onError", async () => {
    const { schema, writerDb, watcherDb } = await twoProcesses(server);
    const errors: Error[] = [];
    const watchErrors: Error[] = [];
    const writer = createPostgresEndpointStore({ client: writerDb, schema, listen: false });
    const watched = createPostgresEndpointStore({
      client: watcherDb,
      schema,
      // One that throws ends nothing: the other callbacks are told, and the store listens again.
      listen: throwingListen(errors),
    });
    let resumed = 0;
    const events = { lost: (error: Error) => void watchErrors.push(error), resumed: () => void resumed++ };
    cleanups.push(watched.watch?.(() => {}, events) ?? (() => {}));
    const { heard, probe } = await watching(watched, writer);
    // The first connection is no resumption.
    expect(resumed).toBe(0);
    const [pid] = await listeners(writerDb, schema);
    await writerDb.query("SELECT pg_terminate_backend($1)", [pid]);
    await vi.waitFor(() => expect(errors.length).toBeGreaterThan(0), { timeout: 10_000 });
    expect(watchErrors).toEqual(errors);
    await vi.waitFor(() => expect(resumed).toBe(1), { timeout: 10_000 });
    // Heard again once it listens again: a probe written after the loss arrives.
    const from = heard.length;
    await vi.waitFor(
      async () => {
        await writer.update(probe.id, { description: String(Math.random()) });
        expect(heard.slice(from)).toContain(probe.id);
      },
      { timeout: 10_000, interval: 20 },
    );
    const endpoint = endpointFixture();
    expect(await heardAfter(heard, writer, probe.id, () => writer.create(endpoint))).toEqual([endpoint.id]);
    expect((await listeners(writerDb, schema)).filter((p) => p !== pid)).toHaveLength(1);
  });

  it("a worker reports a lost listening connection (endpoint_watch_lost), and reads every endpoint again once it listens again", async () => {
    const { schema, writerDb, watcherDb, writer } = await twoStores(server);
    const store = createPostgresEndpointStore({ client: watcherDb, schema, listen: { retryMs: 5 } });
    let reads = 0;
    const endpoints: EndpointStore = {
      ...store,
      get(id) {
        reads++;
        return store.get(id);
      },
    };
    const queue = createPostgresDeliveryQueue({ client: watcherDb, schema });
    let clock = T0;
    const endpoint = endpointFixture();
    await writer.create(endpoint);
    const publish = async (delayMs: number) =>
      (await queue.publish(createEvent({ type: "order.created", data: { delayMs } }), { now: T0, delayMs }))
        .deliveryIds[0] as string;
    const first = await publish(0);
    const second = await publish(500);
    const events: DeliveryWorkerEvent[] = [];
    const worker = createDeliveryWorker({
      queue,
      endpoints,
      dispatcher: fakeDispatcher().dispatcher,
      now: () => clock,
      endpointCacheMs: 3_600_000,
      onEvent: (event) => events.push(event),
    });
    cleanups.push(() => worker.stop());
    worker.start();
    await vi.waitFor(async () => expect((await queue.get(first))?.state.status).toBe("delivered"), {
      timeout: 20_000,
    });
    expect(reads).toBe(1);
    // The worker's store object listens once for all its watches: a watch of the test's hears when it does.
    let resumed = 0;
    cleanups.push(store.watch?.(() => {}, { resumed: () => void resumed++ }) ?? (() => {}));
    await watching(store, writer);
    const [pid] = await listeners(writerDb, schema);
    await writerDb.query("SELECT pg_terminate_backend($1)", [pid]);
    const errors = () => events.flatMap((event) => (event.type === "error" ? [event.error] : []));
    await vi.waitFor(() => expect(errors().length).toBeGreaterThan(0), { timeout: 10_000 });
    expect(errors()[0]).toMatchObject({ name: "WebhookDeliveryError", code: "endpoint_watch_lost" });
    expect((errors()[0] as Error).cause).toBeInstanceOf(Error);
    await vi.waitFor(() => expect(resumed).toBe(1), { timeout: 10_000 });
    // What another process wrote in between was not told: the cached endpoint is read again, within the hour.
    clock = T0 + 500;
    worker.wake();
    await worker.drained();
    expect((await queue.get(second))?.state.status).toBe("delivered");
    expect(reads).toBe(2);
  });

  it("a worker sends nothing more to an endpoint another process deletes, long before its endpointCacheMs", async () => {
    const { schema, writerDb, watcherDb } = await twoProcesses(server);
    const writer = createPostgresEndpointStore({ client: writerDb, schema, listen: false });
    const endpoints = createPostgresEndpointStore({ client: watcherDb, schema });
    const queue = createPostgresDeliveryQueue({ client: watcherDb, schema });
    let clock = T0;
    const endpoint = endpointFixture();
    await writer.create(endpoint);
    const publish = async (delayMs: number) => {
      const event = createEvent({ type: "order.created", data: { delayMs } });
      return (await queue.publish(event, { now: T0, delayMs })).deliveryIds[0] as string;
    };
    const first = await publish(0);
    const second = await publish(500);
    const fake = fakeDispatcher();
    const worker = createDeliveryWorker({
      queue,
      endpoints,
      dispatcher: fake.dispatcher,
      now: () => clock,
      endpointCacheMs: 3_600_000,
    });
    cleanups.push(() => worker.stop());
    worker.start();
    await vi.waitFor(async () => expect((await queue.get(first))?.state.status).toBe("delivered"), {
      timeout: 20_000,
    });
    // The worker's store object listens once for all its watches: a watch of the test's hears when it does.
    const { heard } = await watching(endpoints, writer);
    await writer.delete(endpoint.id);
    await vi.waitFor(() => expect(heard).toContain(endpoint.id), { timeout: 10_000 });
    clock = T0 + 500;
    worker.wake();
    await worker.drained();
    expect(fake.sent).toHaveLength(1);
    expect((await queue.get(second))?.state).toMatchObject({ status: "exhausted", lastErrorKind: "endpoint_disabled" });
  });
});
