import { afterEach, describe, expect, it, vi } from "vitest";
import type { EndpointStore } from "../../../../src/webhooks/delivery/endpoint-store";
import { createEvent } from "../../../../src/webhooks/delivery/event";
import { createDeliveryWorker } from "../../../../src/webhooks/delivery/node/index";
import {
  createPostgresDeliveryQueue,
  createPostgresEndpointStore,
} from "../../../../src/webhooks/delivery/postgres/index";
import { databases } from "../../../support/databases";
import { type DeliveryStores, deliveryDatabase, memoryDeliveryStores } from "../delivery-stores";
import { endpointFixture } from "../store-contract";
import { fakeDispatcher } from "./fake-dispatcher";

const T0 = 1_700_000_000_000;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

// The endpoint store with its reads counted (every other method as it is, `watch` too).
function counted(store: EndpointStore): { store: EndpointStore; reads: () => number } {
  let reads = 0;
  return {
    store: {
      ...store,
      get(id) {
        reads++;
        return store.get(id);
      },
    },
    reads: () => reads,
  };
}

// One delivery sent (so the worker caches the endpoint, for the default endpointCacheMs of 1 s), a second one due
// 500 ms later; `change` runs in between, through the same store object the worker reads.
async function changedWhileCached(
  make: () => Promise<DeliveryStores>,
  change: (s: EndpointStore, id: string) => unknown,
) {
  let clock = T0;
  const stores = await make();
  const { store, reads } = counted(stores.endpoints);
  const endpoint = endpointFixture();
  await store.create(endpoint);
  const publish = async (delayMs: number) => {
    const event = createEvent({ type: "order.created", data: { delayMs } });
    const [id] = (await stores.queue.publish(event, { now: T0, delayMs })).deliveryIds;
    return id as string;
  };
  const first = await publish(0);
  const second = await publish(500);
  const fake = fakeDispatcher();
  const worker = createDeliveryWorker({
    queue: stores.queue,
    endpoints: store,
    dispatcher: fake.dispatcher,
    now: () => clock,
  });
  cleanups.push(() => worker.stop());
  worker.start();
  // Not drained(): the second delivery is scheduled (T0 + 500 ms on the test's clock).
  await vi.waitFor(async () => expect((await stores.queue.get(first))?.state.status).toBe("delivered"), {
    timeout: 20_000,
  });
  const readsBefore = reads();
  await change(store, endpoint.id);
  clock = T0 + 500;
  worker.wake();
  await worker.drained();
  return { sent: fake.sent.length, second: (await stores.queue.get(second))?.state, readsBefore, reads: reads() };
}

function endpointCacheSuite(name: string, make: () => Promise<DeliveryStores>): void {
  describe(`the worker's endpoint cache (${name})`, () => {
    it("an endpoint deleted while cached receives nothing more: its next due delivery is parked (regression: one more was sent within endpointCacheMs)", async () => {
      const { sent, second } = await changedWhileCached(make, (store, id) => store.delete(id));
      expect(sent).toBe(1);
      expect(second).toMatchObject({ status: "exhausted", lastErrorKind: "endpoint_disabled", attempts: 0 });
    });

    it("an endpoint disabled while cached receives nothing more: its next due delivery is parked", async () => {
      const disable = (store: EndpointStore, id: string) =>
        store.update(id, { status: "disabled", disabledReason: "manual", disabledAt: T0 });
      const { sent, second } = await changedWhileCached(make, disable);
      expect(sent).toBe(1);
      expect(second).toMatchObject({ status: "exhausted", lastErrorKind: "endpoint_disabled", attempts: 0 });
    });

    it("an endpoint unchanged is read once for both deliveries: the cache still serves the healthy path", async () => {
      const { sent, second, readsBefore, reads } = await changedWhileCached(make, () => undefined);
      expect(sent).toBe(2);
      expect(second?.status).toBe("delivered");
      expect([readsBefore, reads]).toEqual([1, 1]);
    });
  });
}

endpointCacheSuite("memory", memoryDeliveryStores);
for (const backend of databases()) {
  describe(backend.name, () => {
    const schemas = deliveryDatabase(backend, { prefix: "wh_endpoint_cache", max: 2 });
    endpointCacheSuite(backend.name, async () => {
      const schema = await schemas.emptied();
      return {
        endpoints: createPostgresEndpointStore({ client: schemas.db, schema }),
        queue: createPostgresDeliveryQueue({ client: schemas.db, schema }),
      };
    });
  });
}
