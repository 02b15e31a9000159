import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createEvent } from "../../../src/webhooks/delivery/event";
import { transition } from "../../../src/webhooks/delivery/state-machine";
import { DueHeap } from "../../../src/webhooks/memory/queue/due-heap";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../src/webhooks/memory/queue/index";
import { endpointFixture, storeContract } from "./store-contract";

storeContract("memory", async () => {
  const endpoints = createMemoryEndpointStore();
  return { endpoints, queue: createMemoryDeliveryQueue({ endpoints }) };
});

describe("DueHeap", () => {
  it("pops in due order under any mix of inserts, moves and deletes (against a sorted reference)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom("set", "delete"), fc.nat(50), fc.nat(1_000)), { maxLength: 300 }),
        (ops) => {
          const heap = new DueHeap();
          const reference = new Map<number, number>();
          for (const [op, slot, due] of ops) {
            if (op === "set") {
              heap.set(slot, due);
              reference.set(slot, due);
            } else {
              heap.delete(slot);
              reference.delete(slot);
            }
            expect(heap.size).toBe(reference.size);
            const min = reference.size === 0 ? undefined : Math.min(...reference.values());
            expect(heap.peekDue()).toBe(min);
          }
        },
      ),
    );
  });
});

describe("memory queue", () => {
  it("forgets the oldest delivered deliveries past the retention limit", async () => {
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints, retainDelivered: 2 });
    const e = endpointFixture();
    await endpoints.create(e);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push(...(await queue.publish(createEvent({ type: "r.created", data: {} }), { now: 0 })).deliveryIds);
    for (const claim of await queue.claim({ limit: 10, now: 0, leaseMs: 100 })) {
      await queue.complete(
        claim,
        transition(claim.state, { type: "attempt", result: { kind: "response", status: 200, durationMs: 1 } }, 1).state,
      );
    }
    expect(await queue.get(ids[0]!)).toBeUndefined();
    expect(await queue.get(ids[1]!)).toBeUndefined();
    expect((await queue.get(ids[3]!))?.state.status).toBe("delivered");
    expect((await queue.list(e.id)).map((d) => d.id)).toEqual([ids[3], ids[2]]);
  });

  it("tells subscribers when something may be due sooner", async () => {
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints });
    await endpoints.create(endpointFixture());
    let calls = 0;
    const off = queue.subscribe?.(() => calls++);
    await queue.publish(createEvent({ type: "s.created", data: {} }));
    off?.();
    await queue.publish(createEvent({ type: "s.created", data: {} }));
    expect(calls).toBe(1);
  });
});
