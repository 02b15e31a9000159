/** `maxPayloadBytes` of both queues: checked at construction, and the limit publish keeps (the default is in the contract). */
import { afterEach, describe, expect, it } from "vitest";
import type { DeliveryQueue } from "../../../src/webhooks/delivery/delivery-queue";
import { createEvent } from "../../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../src/webhooks/delivery/memory/index";
import { createPostgresDeliveryQueue } from "../../../src/webhooks/delivery/postgres/index";
import { databases } from "../../support/databases";
import { postgresDeliveryStores } from "./delivery-stores";
import { endpointFixture } from "./store-contract";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

type Make = (maxPayloadBytes: unknown) => Promise<DeliveryQueue>;

const queues: [string, Make][] = [
  [
    "memory",
    async (maxPayloadBytes) => {
      const endpoints = createMemoryEndpointStore();
      await endpoints.create(endpointFixture({ enabledEvents: ["*"] }));
      return createMemoryDeliveryQueue({ endpoints, maxPayloadBytes: maxPayloadBytes as number });
    },
  ],
  ...databases().map((backend): [string, Make] => [
    backend.name,
    async (maxPayloadBytes) => {
      const stores = await postgresDeliveryStores(backend, cleanups, {
        prefix: "wh_max_payload",
        max: 2,
        queue: { maxPayloadBytes: maxPayloadBytes as number },
      });
      await stores.endpoints.create(endpointFixture({ enabledEvents: ["*"] }));
      return stores.queue;
    },
  ]),
];

// Construction reads no database: the PostgreSQL queue is refused before its client is used, so a client that
// answers nothing stands in (opening PGlite for each value cost seconds apiece).
const constructors: [string, (maxPayloadBytes: unknown) => unknown][] = [
  [
    "memory",
    (maxPayloadBytes) =>
      createMemoryDeliveryQueue({
        endpoints: createMemoryEndpointStore(),
        maxPayloadBytes: maxPayloadBytes as number,
      }),
  ],
  [
    "postgres",
    (maxPayloadBytes) =>
      createPostgresDeliveryQueue({
        client: { query: async () => ({ rows: [] }) },
        maxPayloadBytes: maxPayloadBytes as number,
      }),
  ],
];

describe.each(constructors)("maxPayloadBytes at construction (%s queue)", (_name, construct) => {
  it.each([0, -1, 1.5, Number.NaN, "1024"])("refuses %s, naming the option", (value) => {
    expect(() => construct(value)).toThrow(/maxPayloadBytes/);
  });

  it("takes a positive integer and Infinity", () => {
    expect(() => construct(100)).not.toThrow();
    expect(() => construct(Number.POSITIVE_INFINITY)).not.toThrow();
  });
});

describe.each(queues)("maxPayloadBytes (%s)", (_name, make) => {
  it("keeps the limit given: an event one byte over is refused, one at it queued; Infinity takes any size", async () => {
    const small = await make(100);
    const shell = JSON.stringify(createEvent({ type: "a.b", data: { s: "" }, id: "evt_1", now: 0 })).length;
    const sized = (bytes: number, id: string) =>
      createEvent({ type: "a.b", data: { s: "x".repeat(bytes - shell) }, id, now: 0 });
    await expect(small.publish(sized(101, "evt_1"))).rejects.toMatchObject({ code: "payload_too_large" });
    expect((await small.publish(sized(100, "evt_2"))).deliveryIds).toHaveLength(1);
    const any = await make(Number.POSITIVE_INFINITY);
    expect((await any.publish(sized(2_000_000, "evt_3"))).deliveryIds).toHaveLength(1);
  });
});
