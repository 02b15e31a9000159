import { afterEach, describe, expect, it } from "vitest";
import { createEvent } from "../../../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../../src/webhooks/delivery/memory/index";
import { createDeliveryWorker, type DeliveryWorker } from "../../../../src/webhooks/delivery/node/index";
import { fakeDispatcher } from "../node/fake-dispatcher";
import { endpointFixture } from "../store-contract";

const T0 = 1_700_000_000_000;
const workers: DeliveryWorker[] = [];
afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.stop();
});

// Until nothing has been sent for a few turns of the event loop: no wall-clock wait.
async function settle(sent: () => number): Promise<void> {
  let last = sent();
  for (let quiet = 0, turns = 0; quiet < 20 && turns < 2_000; turns++) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    quiet = sent() === last ? quiet + 1 : 0;
    last = sent();
  }
}

describe("the memory queue's shared rate limits", () => {
  it("hands every worker on the queue one store: two workers together send at most the endpoint's rate", async () => {
    const clock = { now: T0 };
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints, now: () => clock.now });
    expect(queue.sharedRateLimits?.()).toBe(queue.sharedRateLimits?.());
    await endpoints.create(endpointFixture({ url: "https://paced.example/hook", enabledEvents: ["*"], rateLimit: 5 }));
    const fake = fakeDispatcher();
    for (let i = 0; i < 2; i++) {
      const worker = createDeliveryWorker({ queue, endpoints, dispatcher: fake.dispatcher, now: () => clock.now });
      workers.push(worker);
      worker.start();
    }
    for (let i = 0; i < 6; i++)
      await queue.publish(createEvent({ type: "order.created", data: { i }, now: T0 }), { now: T0 });
    for (const worker of workers) worker.wake();
    await settle(() => fake.sent.length);
    // The pacer's default burst of 1: one now, the next a fifth of a second later (each worker alone sent one).
    expect(fake.sent).toHaveLength(1);
    clock.now += 200;
    for (const worker of workers) worker.wake();
    await settle(() => fake.sent.length);
    expect(fake.sent).toHaveLength(2);
  });
});
