import { afterEach, describe, expect, it } from "vitest";
import { createEndpointRateLimiter } from "../../../../src/ratelimit/endpoint-limiter";
import { createEndpointAdmin } from "../../../../src/webhooks/delivery/endpoint-admin";
import { createEvent } from "../../../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../../src/webhooks/delivery/memory/index";
import { createDeliveryWorker, type DeliveryWorkerEvent } from "../../../../src/webhooks/delivery/node/index";
import { localServer } from "./local-server";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

const T0 = 1_700_000_000_000;
const DAY = 86_400_000;

// An endpoint whose stored rate_limit the API would refuse (written by hand, by another tool or an earlier version).
async function storedRate(rate: number) {
  let now = T0;
  const sentAt: number[] = [];
  const server = await localServer((_req, res) => {
    sentAt.push(now);
    res.end("ok");
  });
  const endpoints = createMemoryEndpointStore();
  const queue = createMemoryDeliveryQueue({ endpoints });
  const urlPolicy = { allowHttp: true, allow: ["127.0.0.1"] };
  const admin = createEndpointAdmin({ endpoints, queue, urlPolicy, resolve: false, now: () => now });
  const created = await admin.create({ url: server.url, enabled_events: ["*"], rate_limit: 1 });
  if (!created.ok) throw new Error("setup failed");
  await endpoints.update(created.value.id, { rateLimit: rate });
  const events: DeliveryWorkerEvent[] = [];
  const worker = createDeliveryWorker({
    queue,
    endpoints,
    dispatcher: { urlPolicy },
    endpointCacheMs: 0,
    now: () => now,
    rateLimiter: createEndpointRateLimiter(),
    onEvent: (event) => events.push(event),
  });
  cleanups.push(async () => {
    await worker.stop();
    await server.close();
  });
  worker.start();
  const ids: string[] = [];
  for (let i = 0; i < 2; i++) {
    ids.push(...(await queue.publish(createEvent({ type: "order.created", data: { i } }), { now })).deliveryIds);
  }
  // Waits until the worker has done all it can at the fake clock's time.
  const quiet = async () => {
    while (worker.inFlight > 0 || ((await queue.nextDueAt()) ?? Number.POSITIVE_INFINITY) <= now) {
      await new Promise((r) => setTimeout(r, 2));
    }
  };
  const advance = async (ms: number) => {
    await quiet();
    now += ms;
    worker.wake();
    await quiet();
  };
  return { queue, ids, sentAt, events, advance, quiet };
}

describe("delivery worker: an endpoint stored with a rate the pacer cannot run", () => {
  for (const rate of [1e-300, 0, -1, Number.NaN]) {
    it(`paces rate_limit ${rate} at the slowest rate the API accepts, one a day (regression: no delivery ever went out)`, async () => {
      const { queue, ids, sentAt, events, advance, quiet } = await storedRate(rate);
      await quiet();
      expect(sentAt).toEqual([T0]);
      const waiting = await queue.get(ids[1] as string);
      // Deferred without using an attempt, to when the pacer admits it.
      expect(waiting?.state).toMatchObject({ status: "pending", attempts: 0, nextAttemptAt: T0 + DAY });
      await advance(DAY);
      expect(sentAt).toEqual([T0, T0 + DAY]);
      expect(events.filter((event) => event.type === "error")).toEqual([]);
    });
  }

  for (const rate of [1e9, Number.POSITIVE_INFINITY]) {
    it(`paces rate_limit ${rate} at the fastest rate the API accepts`, async () => {
      const { sentAt, events, advance } = await storedRate(rate);
      await advance(1);
      expect(sentAt).toHaveLength(2);
      expect(events.filter((event) => event.type === "error")).toEqual([]);
    });
  }
});
