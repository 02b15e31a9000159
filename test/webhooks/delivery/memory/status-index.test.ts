import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { DeliveryListOptions, DeliveryQueue } from "../../../../src/webhooks/delivery/delivery-queue";
import { createEvent } from "../../../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../../src/webhooks/delivery/memory/index";
import { StatusIndex, type StatusIndexed } from "../../../../src/webhooks/delivery/memory/status-index";
import {
  DELIVERY_STATUSES,
  type DeliveryStatus,
  defaultDeliveryConfig,
  transition,
} from "../../../../src/webhooks/delivery/state-machine";
import { endpointFixture } from "../store-contract";

// Regression: the memory queue's listing filtered by status stepped over every non-matching delivery of the endpoint,
// one by one: a page of `status=failed` among 1,000,000 delivered read them all. It reads a status index now; these
// laws keep its answers those of the unfiltered listing, filtered.

const statusSet = fc.subarray([...DELIVERY_STATUSES], { minLength: 1 });

type Step =
  | { op: "publish"; count: number; at: number }
  | { op: "attempt"; pick: number; outcome: "delivered" | "failed" | "exhausted" | "parked" }
  | { op: "retry"; pick: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    op: fc.constant("publish" as const),
    count: fc.integer({ min: 1, max: 4 }),
    at: fc.integer({ min: 0, max: 20 }),
  }),
  fc.record({
    op: fc.constant("attempt" as const),
    pick: fc.nat(),
    outcome: fc.constantFrom("delivered" as const, "failed" as const, "exhausted" as const, "parked" as const),
  }),
  fc.record({ op: fc.constant("retry" as const), pick: fc.nat() }),
);

const T = 1_000;
const ok = { kind: "response", status: 200, durationMs: 1 } as const;
const bad = { kind: "response", status: 500, durationMs: 1 } as const;
const noRetry = { ...defaultDeliveryConfig, retry: () => undefined };

async function replay(steps: readonly Step[], retainTerminal: number) {
  const endpoints = createMemoryEndpointStore();
  const queue = createMemoryDeliveryQueue({ endpoints, retainTerminal, now: () => T });
  const endpoint = endpointFixture();
  await endpoints.create(endpoint);
  let events = 0;
  for (const s of steps) {
    if (s.op === "publish") {
      for (let i = 0; i < s.count; i++) {
        await queue.publish(createEvent({ id: `evt_${events++}`, type: "r.created", data: {} }), { now: s.at });
      }
    } else if (s.op === "attempt") {
      const claims = await queue.claim({ limit: 1_000, now: Number.MAX_SAFE_INTEGER / 2, leaseMs: 1 });
      const claim = claims[s.pick % Math.max(claims.length, 1)];
      // The others' leases lapse: released at once, as if their worker stopped.
      for (const other of claims)
        if (other !== claim) await queue.update(other.id, ["pending"], other.state, Number.MAX_SAFE_INTEGER);
      if (claim === undefined) continue;
      const result = s.outcome === "delivered" ? ok : bad;
      const config = s.outcome === "exhausted" ? noRetry : defaultDeliveryConfig;
      const event =
        s.outcome === "parked" ? ({ type: "endpoint_disabled" } as const) : { type: "attempt" as const, result };
      await queue.complete(claim, transition(claim.state, event, T, config).state);
    } else {
      const all = await queue.list(endpoint.id, { limit: 1_000_000 });
      const target = all[s.pick % Math.max(all.length, 1)];
      if (target === undefined || target.state.status === "delivered") continue;
      const next = transition(target.state, { type: "manual_retry" }, T);
      await queue.update(target.id, ["failed", "exhausted"], next.state, Number.MAX_SAFE_INTEGER);
    }
  }
  return { queue, id: endpoint.id };
}

const ids = (page: readonly { id: string }[]) => page.map((d) => d.id);

async function filteredAgrees(
  queue: DeliveryQueue,
  id: string,
  statuses: DeliveryStatus[],
  query: DeliveryListOptions,
) {
  const everything = await queue.list(id, { ...query, lastErrorKind: undefined, limit: 1_000_000 });
  const kind = query.lastErrorKind;
  const expected = everything.filter(
    (d) => statuses.includes(d.state.status) && (kind === undefined || d.state.lastErrorKind === kind),
  );
  const limit = query.limit ?? 100;
  const page = await queue.list(id, { ...query, status: statuses });
  expect(ids(page)).toEqual(ids(expected.slice(0, limit)));
}

describe("memory queue: a listing filtered by status equals the unfiltered listing, filtered", () => {
  it("over random publications, attempts, parkings, retries and forgetting, with any cursor, since, limit and last error kind", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { maxLength: 60 }),
        fc.integer({ min: 0, max: 8 }),
        statusSet,
        fc.integer({ min: 0, max: 12 }),
        fc.nat(),
        fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
        fc.option(fc.constantFrom("endpoint_disabled" as const, "http_status" as const), { nil: undefined }),
        async (steps, retain, statuses, limit, pick, since, lastErrorKind) => {
          const { queue, id } = await replay(steps, retain);
          const all = await queue.list(id, { limit: 1_000_000 });
          const cursor = all.length === 0 || pick % 3 === 0 ? undefined : all[pick % all.length]?.id;
          await filteredAgrees(queue, id, statuses, { limit, since, startingAfter: cursor, lastErrorKind });
        },
      ),
      { numRuns: 150 },
    );
  });
});

interface Item extends StatusIndexed {
  status: DeliveryStatus;
  kept: boolean;
}

describe("StatusIndex, compacted at every chance (no slack)", () => {
  const older = (a: Item, b: Item) => a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.seq < b.seq);
  it("yields the kept items of the statuses asked, newest first, whatever moved and was dropped", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.integer({ min: 0, max: 5 }), fc.nat(), fc.constantFrom(...DELIVERY_STATUSES), fc.boolean()),
          {
            maxLength: 80,
          },
        ),
        statusSet,
        fc.nat(),
        (moves, statuses, pick) => {
          const index = new StatusIndex<Item>(older, (item, status) => item.kept && item.status === status, 0);
          const items: Item[] = [];
          for (const [createdAt, which, status, add] of moves) {
            const live = items.filter((item) => item.kept);
            const item = live[which % Math.max(live.length, 1)];
            if (add || item === undefined) {
              const fresh: Item = {
                id: `i${items.length}`,
                createdAt,
                seq: items.length,
                listedIn: 0,
                status,
                kept: true,
              };
              items.push(fresh);
              index.moved(fresh, undefined, status);
            } else if (which % 5 === 0) {
              item.kept = false;
              index.left(item.status);
            } else {
              const from = item.status;
              item.status = status;
              index.moved(item, from, status);
            }
          }
          const newest = items.filter((item) => item.kept).sort((a, b) => (older(a, b) ? 1 : -1));
          const after = pick % 2 === 0 ? undefined : items[pick % Math.max(items.length, 1)];
          const expected = newest.filter(
            (item) => statuses.includes(item.status) && (after === undefined || older(item, after)),
          );
          expect([...index.newestFirst(statuses, after)].map((item) => item.id)).toEqual(
            expected.map((item) => item.id),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});

/**
 * A memory queue of one endpoint with `total` deliveries published and claimed, and `counting(state)`: the state to
 * complete with, which counts the reads of its `member` in `reads.count` (the queue keeps the object it is handed).
 */
async function readCountingQueue(member: string, total: number) {
  const endpoints = createMemoryEndpointStore();
  const queue = createMemoryDeliveryQueue({ endpoints, now: () => T });
  const endpoint = endpointFixture();
  await endpoints.create(endpoint);
  const reads = { count: 0 };
  const counting = <S extends object>(state: S): S =>
    new Proxy(state, {
      get(target, key, receiver) {
        if (key === member) reads.count++;
        return Reflect.get(target, key, receiver);
      },
    });
  for (let i = 0; i < total; i++) {
    await queue.publish(createEvent({ id: `evt_${i}`, type: "r.created", data: {} }), { now: i });
  }
  const claims = await queue.claim({ limit: total, now: total, leaseMs: 60_000 });
  return { queue, endpoint, reads, counting, claims };
}

describe("memory queue: a listing filtered by status reads the page, not the endpoint's deliveries", () => {
  it("a page of failed among 10,000 delivered reads the failed ones (status reads counted, no clock)", async () => {
    const { queue, endpoint, reads, counting, claims } = await readCountingQueue("status", 10_000);
    for (const [i, claim] of claims.entries()) {
      // The 5 oldest fail; every later one is delivered.
      const result = i < 5 ? bad : ok;
      await queue.complete(claim, counting(transition(claim.state, { type: "attempt", result }, T).state));
    }
    reads.count = 0;
    const page = await queue.list(endpoint.id, { status: ["failed"], limit: 10 });
    expect(page).toHaveLength(5);
    expect(reads.count).toBeLessThan(100);
  });
});

describe("memory queue: a listing of parked deliveries reads them, not every exhausted delivery", () => {
  it("a page of the 5 parked behind 10,000 exhausted otherwise reads the parked ones (kind reads counted, no clock)", async () => {
    const { queue, endpoint, reads, counting, claims } = await readCountingQueue("lastErrorKind", 10_005);
    for (const [i, claim] of claims.entries()) {
      // The 5 oldest were parked while the endpoint was disabled; every later one ran out of attempts.
      const event = i < 5 ? ({ type: "endpoint_disabled" } as const) : ({ type: "attempt", result: bad } as const);
      await queue.complete(claim, counting(transition(claim.state, event, T, noRetry).state));
    }
    reads.count = 0;
    const parked = { status: ["exhausted"], lastErrorKind: "endpoint_disabled" } as const;
    const page = await queue.list(endpoint.id, { ...parked, limit: 10 });
    expect(page.map((d) => d.state.lastErrorKind)).toEqual(Array(5).fill("endpoint_disabled"));
    expect(reads.count).toBeLessThan(100);
    // Queued again, one leaves the list; parked again, it comes back in its place.
    const [first] = page;
    reads.count = 0;
    const again = transition(first!.state, { type: "manual_retry" }, T).state;
    expect(await queue.update(first!.id, ["exhausted"], again, T)).toBe(true);
    expect(await queue.list(endpoint.id, { ...parked, limit: 10 })).toHaveLength(4);
    const [claim] = await queue.claim({ limit: 1, now: T, leaseMs: 60_000 });
    await queue.complete(claim!, transition(claim!.state, { type: "endpoint_disabled" }, T).state);
    expect((await queue.list(endpoint.id, { ...parked, limit: 10 })).map((d) => d.id)).toEqual(page.map((d) => d.id));
    expect(reads.count).toBeLessThan(100);
  });
});
