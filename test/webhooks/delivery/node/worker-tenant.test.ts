import { afterEach, describe, expect, it, vi } from "vitest";
import type { WebhookEndpoint } from "../../../../src/webhooks/delivery/endpoint";
import { createEvent } from "../../../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../../src/webhooks/delivery/memory/index";
import { createDeliveryWorker, type DeliveryWorkerEvent } from "../../../../src/webhooks/delivery/node/index";
import { endpointFixture } from "../store-contract";
import { fakeDispatcher } from "./fake-dispatcher";
import { expectRefusedAsStranger } from "./tenant-mismatch";

const T0 = 1_700_000_000_000;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

// A delivery published for `from` (an endpoint's tenant; null: the operator's endpoint, no tenant published), due at
// T0 + 10 s; then its endpoint deleted and its id given to an endpoint `to` (the store written directly: the admin's
// reused-id guard is what normally stops that). Before that delivery is due, the worker has sent one of `to`'s own,
// so with a long endpointCacheMs the new endpoint is cached when the stranger's delivery is claimed.
async function reusedId(from: Partial<WebhookEndpoint>, to: Partial<WebhookEndpoint>, endpointCacheMs: number) {
  let clock = T0;
  const endpoints = createMemoryEndpointStore();
  const queue = createMemoryDeliveryQueue({ endpoints, now: () => clock });
  const id = "we_reused";
  await endpoints.create(endpointFixture({ id, ...from }));
  const tenantOf = (e: Partial<WebhookEndpoint>) => (e.allTenants === true ? "acme" : (e.tenant ?? undefined));
  const event = createEvent({ type: "order.created", data: { of: "the first owner" } });
  const [stranger] = (await queue.publish(event, { now: T0, delayMs: 10_000, tenant: tenantOf(from) })).deliveryIds;
  expect(stranger).toBeDefined();
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

describe("the worker sends a delivery only to an endpoint that receives its tenant's events", () => {
  // endpointCacheMs 0: every claim reads the endpoint (admission); 60 s: it is cached (the hot path).
  describe.each([0, 60_000])("endpointCacheMs %i", (cacheMs) => {
    it("refuses another tenant's delivery before any byte is sent: parked, an error event, no log line (regression: an endpoint given a deleted one's id was sent its tenant's pending deliveries)", async () => {
      const { sent, state, events, queue, id, stranger } = await reusedId(
        { tenant: "acme" },
        { tenant: "globex" },
        cacheMs,
      );
      expect(sent).toEqual([]);
      expect(state).toMatchObject({ status: "exhausted", lastErrorKind: "endpoint_disabled", attempts: 0 });
      await expectRefusedAsStranger(events, queue, id, stranger);
    });

    it("refuses a tenant's delivery to the operator's endpoint without allTenants", async () => {
      const { sent, state } = await reusedId({ tenant: "acme" }, { tenant: null }, cacheMs);
      expect(sent).toEqual([]);
      expect(state?.status).toBe("exhausted");
    });

    it("sends a tenant's delivery to the operator's endpoint with allTenants", async () => {
      const { sent, state } = await reusedId({ tenant: "acme" }, { tenant: null, allTenants: true }, cacheMs);
      expect(sent).toEqual(["the first owner"]);
      expect(state?.status).toBe("delivered");
    });

    it("sends a delivery without a tenant (the operator's, or a PostgreSQL row stored before delivery@14) to any endpoint: never stranded", async () => {
      const { sent, state } = await reusedId({ tenant: null }, { tenant: "globex" }, cacheMs);
      expect(sent).toEqual(["the first owner"]);
      expect(state?.status).toBe("delivered");
    });
  });
});
