import { afterEach, describe, expect, it, vi } from "vitest";
import type { DeliveryQueue } from "../../../../src/webhooks/delivery/delivery-queue";
import type { WebhookEndpoint } from "../../../../src/webhooks/delivery/endpoint";
import { createEvent } from "../../../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../../src/webhooks/delivery/memory/index";
import { createDeliveryWorker, type DeliveryWorkerEvent } from "../../../../src/webhooks/delivery/node/index";
import {
  createPostgresDeliveryQueue,
  createPostgresEndpointStore,
} from "../../../../src/webhooks/delivery/postgres/index";
import { databases } from "../../../support/databases";
import { type DeliveryStores, deliveryDatabase } from "../delivery-stores";
import { endpointFixture } from "../store-contract";
import { fakeDispatcher } from "./fake-dispatcher";
import { expectRefusedAsStranger } from "./tenant-mismatch";

const T0 = 1_700_000_000_000;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** A queue and its endpoint store on the test's clock; `forget`, on PostgreSQL: a delivery's tenant made NULL. */
type Stores = DeliveryStores & { forget?: (deliveryId: string) => Promise<unknown> };
type MakeStores = (clock: () => number) => Promise<Stores>;

/** What changes between the publish and the worker: `legacy` the row stored before delivery@14, `queue` wrapped. */
interface Twist {
  legacy?: boolean;
  queue?: (queue: DeliveryQueue) => DeliveryQueue;
}

// A delivery published for `from` (an endpoint's tenant; null: the operator's endpoint, no tenant published), due at
// T0 + 10 s; then its endpoint deleted and its id given to an endpoint `to` (the store written directly: the admin's
// reused-id guard is what normally stops that). Before that delivery is due, the worker has sent one of `to`'s own,
// so with a long endpointCacheMs the new endpoint is cached when the stranger's delivery is claimed.
async function reusedId(
  make: MakeStores,
  from: Partial<WebhookEndpoint>,
  to: Partial<WebhookEndpoint>,
  endpointCacheMs: number,
  twist: Twist = {},
) {
  let clock = T0;
  const stores = await make(() => clock);
  const { endpoints } = stores;
  const queue = twist.queue?.(stores.queue) ?? stores.queue;
  const id = "we_reused";
  await endpoints.create(endpointFixture({ id, ...from }));
  const tenantOf = (e: Partial<WebhookEndpoint>) => (e.allTenants === true ? "acme" : (e.tenant ?? undefined));
  const event = createEvent({ type: "order.created", data: { of: "the first owner" } });
  const [stranger] = (await queue.publish(event, { now: T0, delayMs: 10_000, tenant: tenantOf(from) })).deliveryIds;
  expect(stranger).toBeDefined();
  if (twist.legacy === true) {
    expect(stores.forget).toBeDefined();
    await stores.forget?.(stranger as string);
  }
  expect(await endpoints.delete(id)).toBe(true);
  await endpoints.create(endpointFixture({ id, url: "https://new-owner.example/in", ...to }));
  const own = createEvent({ type: "order.created", data: { of: "the new owner" } });
  const [own1] = (await queue.publish(own, { now: T0, tenant: tenantOf(to) })).deliveryIds;
  expect(own1).toBeDefined();
  const fake = fakeDispatcher();
  const events: DeliveryWorkerEvent[] = [];
  const worker = createDeliveryWorker({
    queue,
    endpoints,
    dispatcher: fake.dispatcher,
    endpointCacheMs,
    now: () => clock,
    onEvent: (e) => events.push(e),
  });
  cleanups.push(() => worker.stop());
  worker.start();
  // Not drained(): the stranger's delivery is scheduled (for T0 + 10 s on the test's clock).
  await vi.waitFor(async () => expect((await queue.get(own1 as string))?.state.status).toBe("delivered"), {
    timeout: 20_000,
  });
  expect(fake.sent.map((r) => JSON.parse(r.body).data.of)).toEqual(["the new owner"]);
  clock = T0 + 10_000;
  worker.wake();
  await worker.drained();
  const sent = fake.sent.slice(1).map((r) => JSON.parse(r.body).data.of as string);
  return { sent, state: (await queue.get(stranger as string))?.state, events, queue, id, stranger };
}

// A queue of one's own written before ClaimedDelivery.operatorEvent: its claims do not say whose a delivery is.
const silentQueue = (queue: DeliveryQueue): DeliveryQueue => ({
  ...queue,
  claim: async (options) => (await queue.claim(options)).map(({ operatorEvent: _, ...claim }) => claim),
});

function tenantCheckSuite(name: string, make: MakeStores): void {
  describe(`the worker sends a delivery only to an endpoint that receives its tenant's events (${name})`, () => {
    // endpointCacheMs 0: every claim reads the endpoint (admission); 60 s: it is cached (the hot path).
    describe.each([0, 60_000])("endpointCacheMs %i", (cacheMs) => {
      it("refuses another tenant's delivery before any byte is sent: parked, an error event, no log line (regression: an endpoint given a deleted one's id was sent its tenant's pending deliveries)", async () => {
        const { sent, state, events, queue, id, stranger } = await reusedId(
          make,
          { tenant: "acme" },
          { tenant: "globex" },
          cacheMs,
        );
        expect(sent).toEqual([]);
        expect(state).toMatchObject({ status: "exhausted", lastErrorKind: "endpoint_disabled", attempts: 0 });
        await expectRefusedAsStranger(events, queue, id, stranger);
      });

      it("refuses a tenant's delivery to the operator's endpoint without allTenants", async () => {
        const { sent, state, events, queue, id, stranger } = await reusedId(
          make,
          { tenant: "acme" },
          { tenant: null },
          cacheMs,
        );
        expect(sent).toEqual([]);
        expect(state).toMatchObject({ status: "exhausted", lastErrorKind: "endpoint_disabled", attempts: 0 });
        await expectRefusedAsStranger(events, queue, id, stranger);
      });

      it("sends a tenant's delivery to the operator's endpoint with allTenants", async () => {
        const { sent, state } = await reusedId(make, { tenant: "acme" }, { tenant: null, allTenants: true }, cacheMs);
        expect(sent).toEqual(["the first owner"]);
        expect(state?.status).toBe("delivered");
      });

      it("refuses the operator's delivery to a tenant's endpoint: parked, an error event, no log line (regression: the operator's events read as of an unknown tenant and went to whoever got the id)", async () => {
        const { sent, state, events, queue, id, stranger } = await reusedId(
          make,
          { tenant: null },
          { tenant: "globex" },
          cacheMs,
        );
        expect(sent).toEqual([]);
        expect(state).toMatchObject({ status: "exhausted", lastErrorKind: "endpoint_disabled", attempts: 0 });
        await expectRefusedAsStranger(events, queue, id, stranger);
      });

      it.each([false, true])(
        "sends the operator's delivery to the operator's endpoint (allTenants %s)",
        async (all) => {
          const { sent, state, events } = await reusedId(
            make,
            { tenant: null },
            { tenant: null, allTenants: all },
            cacheMs,
          );
          expect(sent).toEqual(["the first owner"]);
          expect(state?.status).toBe("delivered");
          expect(events.filter((e) => e.type === "error")).toEqual([]);
        },
      );

      it("sends a delivery of a queue that does not say whose it is (no operatorEvent) to any endpoint, as before", async () => {
        const twist = { queue: silentQueue };
        const { sent, state } = await reusedId(make, { tenant: null }, { tenant: "globex" }, cacheMs, twist);
        expect(sent).toEqual(["the first owner"]);
        expect(state?.status).toBe("delivered");
      });
    });
  });
}

tenantCheckSuite("memory", async (clock) => {
  const endpoints = createMemoryEndpointStore();
  return { endpoints, queue: createMemoryDeliveryQueue({ endpoints, now: clock }) };
});
for (const backend of databases()) {
  describe(backend.name, () => {
    const schemas = deliveryDatabase(backend, { prefix: "wh_tenant_check", max: 2 });
    const make = async (clock: () => number): Promise<Stores> => {
      const schema = await schemas.emptied();
      return {
        endpoints: createPostgresEndpointStore({ client: schemas.db, schema }),
        queue: createPostgresDeliveryQueue({ client: schemas.db, schema, now: clock }),
        // As migration delivery@14 left the rows stored before it: a tenant column of NULL, whoever published them.
        forget: (deliveryId) =>
          schemas.db.query(`UPDATE "${schema}".webhook_deliveries SET tenant = NULL WHERE id = $1`, [deliveryId]),
      };
    };
    tenantCheckSuite(backend.name, make);

    describe.each([0, 60_000])("a row stored before migration delivery@14 (endpointCacheMs %i)", (cacheMs) => {
      it.each([
        ["the operator's endpoint", { tenant: null }, { tenant: "globex" }],
        ["a tenant's endpoint", { tenant: "acme" }, { tenant: "globex" }],
      ] as const)("is sent whoever now has the id of %s: its tenant unknown, never stranded", async (_, from, to) => {
        const { sent, state, events } = await reusedId(make, from, to, cacheMs, { legacy: true });
        expect(sent).toEqual(["the first owner"]);
        expect(state?.status).toBe("delivered");
        expect(events.filter((e) => e.type === "error")).toEqual([]);
      });
    });
  });
}
