import { afterEach, describe, expect, it } from "vitest";
import { createEvent } from "../../../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../../src/webhooks/delivery/memory/index";
import { createDeliveryWorker, type DeliveryWorkerEvent } from "../../../../src/webhooks/delivery/node/index";
import { endpointFixture } from "../store-contract";
import { fakeDispatcher } from "./fake-dispatcher";

// What a worker knows of an endpoint (src/webhooks/delivery/node/endpoint-lines.ts), on a fake clock.

const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** A worker on a fake clock at T0 that has delivered one event to one endpoint, so it holds what it read of it. */
async function deliveredOnceAtT0() {
  const clock = { now: T0 };
  const endpoints = createMemoryEndpointStore();
  const queue = createMemoryDeliveryQueue({ endpoints, now: () => clock.now });
  const endpoint = endpointFixture({ url: "https://hooks.example/in", enabledEvents: ["*"] });
  await endpoints.create(endpoint);
  const fake = fakeDispatcher();
  const worker = createDeliveryWorker({ queue, endpoints, dispatcher: fake.dispatcher, now: () => clock.now });
  cleanups.push(() => worker.stop());
  await queue.publish(createEvent({ type: "order.created", data: { i: 0 } }), { now: clock.now });
  worker.start();
  await worker.drained();
  return { clock, endpoints, queue, endpoint, fake, worker };
}

describe("the endpoint cache", () => {
  // Regression: the cache was fresh while `now - loadedAt` stayed under endpointCacheMs, which a clock stepped back
  // (an NTP correction of the wall clock) kept true until the clock caught up again: an endpoint disabled meanwhile
  // kept receiving deliveries for as long as the step.
  it("reads the endpoint again after the clock went back, so a disabled endpoint gets nothing", async () => {
    const { clock, endpoints, queue, endpoint, fake, worker } = await deliveredOnceAtT0();
    expect(fake.sent).toHaveLength(1); // the endpoint is now cached, as read at T0
    await worker.stop();

    clock.now = T0 - HOUR;
    const { deliveryIds } = await queue.publish(createEvent({ type: "order.created", data: { i: 1 } }), {
      now: clock.now,
    });
    await endpoints.update(endpoint.id, { status: "disabled", disabledReason: "manual", disabledAt: clock.now });
    worker.start();
    await worker.drained();
    expect(fake.sent).toHaveLength(1);
    expect((await queue.get(deliveryIds[0] as string))?.state).toMatchObject({
      status: "exhausted",
      lastErrorKind: "endpoint_disabled",
    });
  });

  // The same for the shared circuit as last read: a circuit another worker opened meanwhile was ignored.
  it("reads the shared circuit again after the clock went back, so a circuit opened meanwhile holds", async () => {
    const { clock, queue, endpoint, fake, worker } = await deliveredOnceAtT0();
    expect(fake.sent).toHaveLength(1); // the circuit read closed at T0
    await worker.stop();

    clock.now = T0 - HOUR;
    // Another worker opens the circuit for 30 s.
    await queue.sharedCircuits?.().open(endpoint.id, clock.now + 30_000);
    const { deliveryIds } = await queue.publish(createEvent({ type: "order.created", data: { i: 1 } }), {
      now: clock.now,
    });
    worker.start();
    const due = async () => (await queue.get(deliveryIds[0] as string))?.state.nextAttemptAt;
    while ((await due()) === clock.now) await new Promise((resolve) => setImmediate(resolve));
    expect(fake.sent).toHaveLength(1);
    expect(await due()).toBe(clock.now + 30_000);
  });
});

describe("disabling an endpoint", () => {
  // Regression: a 410 from an endpoint deleted while its attempt was in flight announced endpoint.disabled for an
  // endpoint that no longer existed (the store's update found nothing to disable).
  it("announces nothing for an endpoint deleted while its attempt was in flight", async () => {
    const clock = { now: T0 };
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints, now: () => clock.now });
    const endpoint = endpointFixture({ url: "https://gone.example/in", enabledEvents: ["*"] });
    await endpoints.create(endpoint);
    const fake = fakeDispatcher((host) => host === "gone.example");
    const events: DeliveryWorkerEvent[] = [];
    const worker = createDeliveryWorker({
      queue,
      endpoints,
      dispatcher: fake.dispatcher,
      now: () => clock.now,
      onEvent: (event) => events.push(event),
    });
    cleanups.push(() => worker.stop());
    await queue.publish(createEvent({ type: "order.created", data: {} }), { now: clock.now });
    worker.start();
    while (fake.pending.size === 0) await new Promise((resolve) => setImmediate(resolve));
    await endpoints.delete(endpoint.id);
    for (const pending of fake.pending) pending.answer({ kind: "response", status: 410, body: "", durationMs: 1 });
    await worker.drained();
    expect(events.map((event) => event.type)).not.toContain("endpoint.disabled");
    expect(await endpoints.get(endpoint.id)).toBeUndefined();
  });
});
