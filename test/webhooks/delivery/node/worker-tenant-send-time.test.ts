import { afterEach, describe, expect, it, vi } from "vitest";
import type { EndpointStore } from "../../../../src/webhooks/delivery/endpoint-store";
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

// The store with each endpoint's reads counted (every other method as it is, `watch` too): an admission reads it.
function counted(store: EndpointStore): { store: EndpointStore; readsOf: (id: string) => number } {
  const reads = new Map<string, number>();
  return {
    store: {
      ...store,
      get(id) {
        reads.set(id, (reads.get(id) ?? 0) + 1);
        return store.get(id);
      },
    },
    readsOf: (id) => reads.get(id) ?? 0,
  };
}

// Whatever the worker does within the microtasks after a read (the store and queue are in memory) is done by then.
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

// Whose the waiting delivery is: acme's, or the operator's (published without a tenant, to an endpoint without one).
const firstOwners = [
  { whose: "acme's", tenant: "acme" },
  { whose: "the operator's", tenant: undefined },
] as const;

describe("the worker looks at its endpoint's tenant again right before sending (delivery-worker.ts)", () => {
  it.each(firstOwners)(
    "hands back $whose delivery whose endpoint id was given to another tenant while it waited for a slot, sends nothing, then parks it with tenant_mismatch (regression guard: admission alone let the stranger's delivery out)",
    async ({ tenant }) => {
      const clock = T0;
      const memory = createMemoryEndpointStore();
      const { store: endpoints, readsOf } = counted(memory);
      const queue = createMemoryDeliveryQueue({ endpoints: memory, now: () => clock });
      const fake = fakeDispatcher((host) => host === "blocker.example");
      const events: DeliveryWorkerEvent[] = [];
      // One slot, and an endpoint cache that outlasts the test: only the store's watch makes the worker read again.
      const worker = createDeliveryWorker({
        queue,
        endpoints,
        dispatcher: fake.dispatcher,
        concurrency: 1,
        endpointCacheMs: 3_600_000,
        now: () => clock,
        onEvent: (e) => events.push(e),
      });
      cleanups.push(() => worker.stop());
      const publish = async (of: string, endpointId: string, tenant?: string) => {
        const event = createEvent({ type: "order.created", data: { of } });
        const [id] = (await queue.publish(event, { now: T0, endpointId, tenant })).deliveryIds;
        expect(id).toBeDefined();
        return id as string;
      };

      // The one slot, taken by a request that hangs until the test answers it.
      await endpoints.create(endpointFixture({ id: "we_blocker", url: "https://blocker.example/in" }));
      await publish("the blocker", "we_blocker");
      worker.start();
      await vi.waitFor(() => expect(fake.pending.size).toBe(1), { timeout: 20_000 });

      // The first owner's delivery is claimed and admitted (its endpoint read: the first owner's), then waits.
      const id = "we_reused";
      await endpoints.create(endpointFixture({ id, tenant: tenant ?? null, url: "https://first-owner.example/in" }));
      const stranger = await publish("the first owner", id, tenant);
      await vi.waitFor(() => expect(readsOf(id)).toBe(1), { timeout: 20_000 });
      await settled();

      // Meanwhile the id is deleted and created again for globex through the same store (the store written directly:
      // the admin's reused-id guard is what normally stops that). The watch drops the cached endpoint, and globex's own
      // delivery, admitted next, reads the new one into the line the waiting delivery sends from.
      expect(await endpoints.delete(id)).toBe(true);
      await endpoints.create(endpointFixture({ id, tenant: "globex", url: "https://new-owner.example/in" }));
      const own = await publish("the new owner", id, "globex");
      await vi.waitFor(() => expect(readsOf(id)).toBe(2), { timeout: 20_000 });
      await settled();
      expect(fake.sent.map((r) => JSON.parse(r.body).data.of)).toEqual(["the blocker"]);

      // The slot frees: the first owner's delivery comes first, finds globex's endpoint and goes back, unsent.
      for (const pending of fake.pending) pending.answer({ kind: "response", status: 200, body: "ok", durationMs: 1 });
      await worker.drained();

      expect(fake.sent.map((r) => JSON.parse(r.body).data.of)).toEqual(["the blocker", "the new owner"]);
      expect(fake.sentTo("new-owner.example")).toBe(1);
      expect((await queue.get(own))?.state.status).toBe("delivered");
      // Claimed again, admission parks it as a delivery whose endpoint is gone: no attempt used, nothing logged.
      expect((await queue.get(stranger))?.state).toMatchObject({
        status: "exhausted",
        lastErrorKind: "endpoint_disabled",
        attempts: 0,
      });
      await expectRefusedAsStranger(events, queue, id, stranger);
      // Read twice only (each admission): the re-claimed delivery was refused from the cache, by the same check.
      expect(readsOf(id)).toBe(2);
    },
  );
});
