/**
 * Tenants from publish to receiver: endpoints of tenants "acme" and "globex" and of the operator (no tenant), all
 * subscribed to `order.*`. An event published for a tenant must reach only that tenant's endpoints, one published
 * without a tenant only the operator's, on the memory stores and on PostgreSQL; then the real delivery worker sends
 * each local receiver exactly its own tenant's events, signed with its endpoint's secret (checked by standardwebhooks).
 */
import fc from "fast-check";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import type { DeliveryQueue } from "../../src/webhooks/delivery/delivery-queue";
import type { WebhookEndpoint } from "../../src/webhooks/delivery/endpoint";
import { createEndpointAdmin } from "../../src/webhooks/delivery/endpoint-admin";
import { createEvent, type WebhookEvent } from "../../src/webhooks/delivery/event";
import { matchesEventPattern } from "../../src/webhooks/event-pattern/event-pattern";
import { type Backend, databases } from "../support/databases";
import {
  type DeliveryStores,
  deliverAll,
  memoryDeliveryStores,
  postgresDeliveryStores,
} from "./delivery/delivery-stores";
import { localServer } from "./delivery/node/local-server";
import { endpointFixture } from "./delivery/store-contract";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

const postgresStores = (backend: Backend): Promise<DeliveryStores> =>
  postgresDeliveryStores(backend, cleanups, { prefix: "wh_tenants", max: 6 });

const urlPolicy = { allowHttp: true, allow: ["127.0.0.1"] };
// The three owners: two tenants and the operator (no tenant).
const OWNERS = [
  { name: "acme", tenant: "acme" },
  { name: "globex", tenant: "globex" },
  { name: "operator", tenant: undefined },
] as const;
type Owner = (typeof OWNERS)[number]["name"];

// One endpoint per owner, subscribed to order.*, each at its own URL; through the admin, as the API registers them.
async function register(stores: DeliveryStores, urlOf: (owner: Owner) => string) {
  const admin = createEndpointAdmin({ ...stores, urlPolicy, resolve: false });
  const registered = {} as Record<Owner, WebhookEndpoint>;
  for (const { name, tenant } of OWNERS) {
    const created = await admin.create({ url: urlOf(name), enabled_events: ["order.*"] }, { tenant });
    if (!created.ok) throw new Error(`registering ${name}: ${created.code}`);
    expect(created.value.tenant).toBe(tenant ?? null);
    registered[name] = created.value;
  }
  return registered;
}

// Per owner, the events published for it: two order events, and a type no endpoint subscribes to.
async function publishAll(queue: DeliveryQueue) {
  const published = {} as Record<Owner, { events: WebhookEvent[]; deliveryIds: string[] }>;
  // A millisecond apart: deliveries created in the same one list in no particular order (the queue's contract).
  let now = Date.now();
  for (const { name, tenant } of OWNERS) {
    const events = [
      createEvent({ type: "order.created", data: { owner: name, n: 1 } }),
      createEvent({ type: "order.paid", data: { owner: name, n: 2 } }),
    ];
    const deliveryIds: string[] = [];
    for (const event of events) deliveryIds.push(...(await queue.publish(event, { tenant, now: ++now })).deliveryIds);
    const unsubscribed = await queue.publish(createEvent({ type: "user.created", data: {} }), { tenant, now: ++now });
    expect(unsubscribed.deliveryIds).toEqual([]);
    published[name] = { events, deliveryIds };
  }
  return published;
}

describe.each([
  { name: "memory stores", stores: memoryDeliveryStores },
  ...databases().map((backend) => ({ name: `PostgreSQL on ${backend.name}`, stores: () => postgresStores(backend) })),
])("tenants end to end ($name)", ({ stores: makeStores }) => {
  it("an event published for a tenant gets a delivery for that tenant's endpoint only; one without a tenant, the operator's only", async () => {
    const stores = await makeStores();
    const registered = await register(stores, (owner) => `https://${owner}.example.com/hooks`);
    const published = await publishAll(stores.queue);
    for (const { name } of OWNERS) {
      const deliveries = await stores.queue.list(registered[name].id);
      // Newest first.
      expect(
        deliveries.map((d) => d.eventId),
        name,
      ).toEqual(published[name].events.map((e) => e.id).reverse());
      expect(deliveries.map((d) => d.id).sort(), name).toEqual([...published[name].deliveryIds].sort());
    }
  });

  it("the delivery worker sends each receiver exactly its own tenant's events, signed with its endpoint's secret", async () => {
    const stores = await makeStores();
    const receivers = {} as Record<Owner, Awaited<ReturnType<typeof localServer>>>;
    for (const { name } of OWNERS) {
      const server = await localServer();
      cleanups.push(server.close);
      receivers[name] = server;
    }
    const registered = await register(stores, (owner) => receivers[owner].url);
    const published = await publishAll(stores.queue);
    await deliverAll(stores, cleanups);
    for (const { name } of OWNERS) {
      const verifier = new Webhook(registered[name].secrets[0]?.secret as string);
      const received = receivers[name].received.map(
        (r) => verifier.verify(r.body, r.headers as Record<string, string>) as WebhookEvent,
      );
      const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
      expect(received.sort(byId), name).toEqual([...published[name].events].sort(byId));
      for (const id of published[name].deliveryIds) {
        expect((await stores.queue.get(id))?.state.status, `${name} ${id}`).toBe("delivered");
      }
    }
  });
});

describe("publish fans out by tenant (property, memory stores)", () => {
  const PATTERNS = ["*", "order.*", "order.created", "user.created"] as const;
  const TENANTS = [null, "t1", "t2"] as const;
  const endpointArb = fc.record({
    tenant: fc.constantFrom(...TENANTS),
    enabledEvents: fc.uniqueArray(fc.constantFrom(...PATTERNS), { minLength: 1 }),
    status: fc.constantFrom("enabled" as const, "disabled" as const),
  });

  it("the endpoints that get a delivery are the enabled ones of the event's tenant (none: the operator's) subscribed to its type", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(endpointArb, { maxLength: 12 }),
        fc.constantFrom("order.created", "user.created"),
        fc.constantFrom(undefined, "t1", "t2"),
        async (drawn, type, tenant) => {
          const { endpoints, queue } = await memoryDeliveryStores();
          const made = drawn.map((fields) => endpointFixture(fields));
          for (const endpoint of made) await endpoints.create(endpoint);
          const { deliveryIds } = await queue.publish(createEvent({ type, data: {} }), { tenant });
          const reached = [];
          for (const id of deliveryIds) reached.push((await queue.get(id))?.endpointId);
          // The naive reference: every endpoint looked at, one by one.
          const expected = made
            .filter((e) => e.status === "enabled")
            .filter((e) => e.tenant === (tenant ?? null))
            .filter((e) => e.enabledEvents.some((pattern) => matchesEventPattern(pattern, type)))
            .map((e) => e.id);
          expect(reached.sort()).toEqual(expected.sort());
        },
      ),
      { numRuns: 30 },
    );
  });
});
