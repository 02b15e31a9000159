import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ClaimedDelivery, DeliveryQueue } from "../../../src/webhooks/delivery/delivery-queue";
import { createEvent } from "../../../src/webhooks/delivery/event";
import {
  DELIVERY_STATUSES,
  type DeliveryState,
  type DeliveryStatus,
} from "../../../src/webhooks/delivery/state-machine";
import { nextState, outcomeEvent, type QueueKind, type QueueUnderTest, queuesUnderTest } from "./queue-model-support";
import { endpointFixture } from "./store-contract";

// A model-based test of the delivery queues' retention (`retainTerminalMs`): random publishes, claims, outcomes,
// manual actions and clock steps, forward and back, on the memory queue and the PostgreSQL queue, against a model
// written here. The model knows when each delivery ended and how far the clock has moved forward since (the time
// that really passed, whatever steps back a corrected clock made), and when each queue purges:
// - never: a delivery that has not ended (pending, failed and retrying, leased), whatever the clock does;
// - never early: an ended one only once the clock has moved forward by the retention since it ended;
// - surely: the memory queue on every publish and every delivery that ends, the PostgreSQL queue every 64 outcomes
//   stored (postgres-delivery-queue.ts PURGE_EVERY), whatever ended more than the retention ago on the clock as read.
// What a queue purged in between those bounds is its choice; the model then forgets it too, and never sees it again.

const T0 = 1_700_000_000_000;
const RETAIN = 10_000;
// postgres-delivery-queue.ts: a purge after every 64 outcomes stored (documented: `retainTerminalMs`).
const PURGE_EVERY = 64;

// The outcomes this model stores, of those in queue-model-support.ts: some end a delivery (delivered, gone, parked).
type Outcome = "delivered" | "retry" | "gone" | "parked" | "defer";

type Command =
  | { op: "publish"; endpoint: number; delayMs: number }
  | { op: "claim"; limit: number; leaseMs: number }
  | { op: "complete"; pick: number; outcome: Outcome }
  /** A manual action at `now - behind`: an admin's clock behind the queue's (endpoint-admin.ts passes its own). */
  | { op: "update"; pick: number; action: "manual_retry" | "endpoint_disabled"; behind: number }
  | { op: "tick"; ms: number }
  /** The clock set to when a delivery's retention ends, give or take 1 ms: the boundary, from either side. */
  | { op: "expire"; pick: number; offset: number }
  /** Many outcomes at once (publish, claim, complete `n`), so the PostgreSQL queue reaches its purges. */
  | { op: "burst"; n: number; outcome: Outcome };

const pick = fc.nat({ max: 1_000 });
const outcome = fc.constantFrom<Outcome>("delivered", "delivered", "retry", "gone", "parked");
const commandArb: fc.Arbitrary<Command> = fc.oneof(
  {
    arbitrary: fc.record({
      op: fc.constant("publish" as const),
      endpoint: fc.nat({ max: 1 }),
      delayMs: fc.constantFrom(0, 0, 5_000),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      op: fc.constant("claim" as const),
      limit: fc.integer({ min: 1, max: 4 }),
      leaseMs: fc.constantFrom(1_000, 30_000),
    }),
    weight: 3,
  },
  { arbitrary: fc.record({ op: fc.constant("complete" as const), pick, outcome }), weight: 4 },
  {
    arbitrary: fc.record({
      op: fc.constant("update" as const),
      pick,
      action: fc.constantFrom("manual_retry" as const, "endpoint_disabled" as const),
      behind: fc.constantFrom(0, 0, 3_000, 20_000),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({ op: fc.constant("tick" as const), ms: fc.constantFrom(1, 1_000, 5_000, 9_999) }),
    weight: 3,
  },
  // A clock stepped back by a little, or by more than the retention.
  { arbitrary: fc.record({ op: fc.constant("tick" as const), ms: fc.constantFrom(-1, -3_000, -12_000) }), weight: 1 },
  {
    arbitrary: fc.record({ op: fc.constant("expire" as const), pick, offset: fc.constantFrom(-1, 0, 1) }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      op: fc.constant("burst" as const),
      n: fc.integer({ min: 8, max: 64 }),
      outcome: fc.constantFrom<Outcome>("delivered", "retry", "parked"),
    }),
    weight: 2,
  },
);

// --- The model ------------------------------------------------------------------------------------------------------

interface ModelDelivery {
  readonly id: string;
  readonly endpointId: string;
  state: DeliveryState;
  lease: { token: string; until: number } | undefined;
  /** When it ended, on the queue's clock as it read then; `undefined` while it has not ended. */
  endedAt: number | undefined;
  /** How far the clock moved forward since it ended: the least time that passed since (steps back are corrections). */
  forward: number;
  /** Purged by the queue (seen gone). */
  gone: boolean;
}

const hasEnded = (state: DeliveryState) => state.status === "delivered" || state.status === "exhausted";

class Model {
  now = T0;
  readonly deliveries: ModelDelivery[] = [];
  readonly byId = new Map<string, ModelDelivery>();
  /** Every claim the queue returned, stale ones too: what `complete` picks from. */
  readonly claims: ClaimedDelivery[] = [];
  /** `complete` calls made (each its own batch: they are awaited one by one). */
  completes = 0;
  events = 0;
  /** Deliveries the queue must have purged by the end of the step. */
  readonly mustBeGone = new Set<ModelDelivery>();

  constructor(readonly kind: QueueKind) {}

  setClock(to: number): void {
    if (to > this.now) {
      for (const d of this.deliveries) if (d.endedAt !== undefined) d.forward += to - this.now;
    }
    this.now = to;
  }

  /** A purge at `now` on the queue's clock: everything older than the retention on that clock goes. */
  purgeAt(now: number, inclusive: boolean): void {
    for (const d of this.deliveries) {
      if (d.gone || d.endedAt === undefined) continue;
      const age = now - d.endedAt;
      // memory-delivery-queue.ts keeps one while `now - endedAt < retainMs`; PostgreSQL deletes `ended_at < now - ms`.
      if (inclusive ? age >= RETAIN : age > RETAIN) this.mustBeGone.add(d);
    }
  }

  settled(d: ModelDelivery, state: DeliveryState): void {
    d.state = state;
    d.lease = undefined;
    d.endedAt = hasEnded(state) ? this.now : undefined;
    d.forward = 0;
    if (this.kind === "memory" && hasEnded(state)) this.purgeAt(this.now, true);
  }
}

// --- Running the commands -------------------------------------------------------------------------------------------

const ENDPOINTS = ["we_ret_a", "we_ret_b"] as const;

async function publish(model: Model, queue: DeliveryQueue, endpoint: number, delayMs: number): Promise<void> {
  const endpointId = ENDPOINTS[endpoint] as string;
  const now = model.now;
  const event = createEvent({ id: `evt_${++model.events}`, type: "r.done", data: {}, now });
  const { deliveryIds } = await queue.publish(event, { now, delayMs, endpointId });
  expect(deliveryIds).toHaveLength(1);
  // memory-delivery-queue.ts: every publish runs the retention first.
  if (model.kind === "memory") model.purgeAt(now, true);
  const state: DeliveryState = {
    status: "pending",
    attempts: 0,
    nextAttemptAt: now + delayMs,
    lastAttemptAt: null,
    lastStatus: null,
    lastErrorKind: null,
    deliveredAt: null,
  };
  const d: ModelDelivery = {
    id: deliveryIds[0] as string,
    endpointId,
    state,
    lease: undefined,
    endedAt: undefined,
    forward: 0,
    gone: false,
  };
  model.deliveries.push(d);
  model.byId.set(d.id, d);
}

async function claim(model: Model, queue: DeliveryQueue, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  const claimed = await queue.claim({ limit, now: model.now, leaseMs });
  for (const x of claimed) {
    const d = model.byId.get(x.id);
    expect(d && !d.gone && !hasEnded(d.state), `claimed ${x.id}: a kept delivery that has not ended`).toBe(true);
    (d as ModelDelivery).lease = { token: x.leaseToken, until: x.leaseUntil };
  }
  model.claims.push(...claimed);
  return claimed;
}

async function complete(model: Model, queue: DeliveryQueue, x: ClaimedDelivery, o: Outcome): Promise<void> {
  const state = nextState(x.state, outcomeEvent(o, model.now), model.now);
  const d = model.byId.get(x.id) as ModelDelivery;
  const held = !d.gone && d.lease?.token === x.leaseToken;
  const stored = await queue.complete(x, state);
  expect(stored, `complete of ${x.id} with ${held ? "a held" : "a stale"} lease`).toBe(held);
  if (held) model.settled(d, state);
  model.completes++;
  if (model.kind === "postgres" && model.completes % PURGE_EVERY === 0) model.purgeAt(model.now, false);
}

async function update(model: Model, queue: DeliveryQueue, c: Extract<Command, { op: "update" }>): Promise<void> {
  if (model.deliveries.length === 0) return;
  const d = model.deliveries[c.pick % model.deliveries.length] as ModelDelivery;
  const from: DeliveryStatus[] = c.action === "manual_retry" ? ["exhausted"] : ["pending", "failed"];
  const at = model.now - c.behind;
  const state = nextState(d.state, { type: c.action }, at);
  const expected = !d.gone && from.includes(d.state.status) && (d.lease === undefined || d.lease.until <= at);
  expect(await queue.update(d.id, from, state, at), `update of ${d.id} (${c.action}) at now - ${c.behind}`).toBe(
    expected,
  );
  if (expected) model.settled(d, state);
}

async function step(model: Model, queue: DeliveryQueue, c: Command): Promise<void> {
  switch (c.op) {
    case "publish":
      return publish(model, queue, c.endpoint, c.delayMs);
    case "claim":
      await claim(model, queue, c.limit, c.leaseMs);
      return;
    case "complete": {
      if (model.claims.length === 0) return;
      return complete(model, queue, model.claims[c.pick % model.claims.length] as ClaimedDelivery, c.outcome);
    }
    case "update":
      return update(model, queue, c);
    case "tick":
      model.setClock(model.now + c.ms);
      return;
    case "expire": {
      const ended = model.deliveries.filter((d) => !d.gone && d.endedAt !== undefined);
      const d = ended[c.pick % Math.max(1, ended.length)];
      if (d !== undefined) model.setClock((d.endedAt as number) + RETAIN + c.offset);
      return;
    }
    case "burst": {
      for (let i = 0; i < c.n; i++) await publish(model, queue, 0, 0);
      for (const x of await claim(model, queue, c.n, 60_000)) await complete(model, queue, x, c.outcome);
      return;
    }
  }
}

/**
 * What the queue keeps agrees with the model: each endpoint's list, and its list by status and of parked deliveries
 * (indexes of their own in the memory queue), hold exactly the model's kept deliveries. One missing from them was
 * purged, which it may be only once ended and past its retention; one that must be purged is not there.
 */
// A state as text, its fields in one order, to compare without an `expect` per delivery.
const stateText = (state: DeliveryState): string =>
  JSON.stringify([
    state.status,
    state.attempts,
    state.nextAttemptAt,
    state.lastAttemptAt,
    state.lastStatus,
    state.lastErrorKind,
    state.deliveredAt,
  ]);

async function check(model: Model, queue: DeliveryQueue): Promise<void> {
  for (const endpointId of ENDPOINTS) {
    const rows = await queue.list(endpointId, { limit: 1_000 });
    const listed = new Map(rows.map((r) => [r.id, r]));
    // Collected, then asserted once: a step checks hundreds of rows, and an `expect` each made the file 5 times slower.
    const wrong: string[] = [];
    for (const r of rows) {
      const d = model.byId.get(r.id);
      if (d === undefined) wrong.push(`listed ${r.id} was never published`);
      else if (d.gone) wrong.push(`${r.id} came back after it was purged`);
    }
    for (const d of model.deliveries) {
      if (d.gone || d.endpointId !== endpointId) continue;
      const record = listed.get(d.id);
      if (record === undefined) {
        // Purged: allowed once it ended and the clock moved forward by the retention since.
        if (d.endedAt === undefined) wrong.push(`${d.id} (${d.state.status}) purged, though it has not ended`);
        else if (d.forward < RETAIN) wrong.push(`${d.id} purged ${d.forward} ms after it ended (${RETAIN} kept)`);
        d.gone = true;
        continue;
      }
      if (model.mustBeGone.has(d)) wrong.push(`${d.id} ended at T0+${(d.endedAt ?? 0) - T0}, not purged`);
      if (stateText(record.state) !== stateText(d.state)) {
        wrong.push(`${d.id}'s state ${stateText(record.state)}, the model's ${stateText(d.state)}`);
      }
    }
    expect(wrong, `${endpointId}'s deliveries`).toEqual([]);
    const kept = model.deliveries.filter((d) => d.endpointId === endpointId && !d.gone);
    expect(rows.length, `the count of ${endpointId}`).toBe(kept.length);
    for (const status of DELIVERY_STATUSES) {
      const byStatus = await queue.list(endpointId, { status: [status], limit: 1_000 });
      const want = kept.filter((d) => d.state.status === status).map((d) => d.id);
      expect(byStatus.map((r) => r.id).sort(), `${endpointId}'s ${status}`).toEqual(want.sort());
    }
    const parked = await queue.list(endpointId, {
      status: ["exhausted"],
      lastErrorKind: "endpoint_disabled",
      limit: 1_000,
    });
    const want = kept.filter((d) => d.state.status === "exhausted" && d.state.lastErrorKind === "endpoint_disabled");
    expect(parked.map((r) => r.id).sort(), `${endpointId}'s parked`).toEqual(want.map((d) => d.id).sort());
  }
  model.mustBeGone.clear();
}

// The steps so far and the clock, added to a failure's message (built only then: a step checks hundreds of rows).
async function explained(trail: readonly string[], model: Model, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    if (error instanceof Error) error.message += `\n  after ${trail.join(" ")} at T0+${model.now - T0}`;
    throw error;
  }
}

async function run(target: QueueUnderTest, commands: readonly Command[]): Promise<void> {
  const model = new Model(target.kind);
  const clock = () => model.now;
  await target.withQueue(clock, async (stores) => {
    for (const id of ENDPOINTS) await stores.endpoints.create(endpointFixture({ id, enabledEvents: ["r.*"] }));
    const { queue } = stores;
    const trail: string[] = [];
    for (const c of commands) {
      trail.push(JSON.stringify(c));
      await explained(trail, model, async () => {
        await step(model, queue, c);
        await check(model, queue);
      });
    }
    // In the end every ended delivery goes: the clock well past every retention, then a purge (the memory queue's
    // next publish, the PostgreSQL queue's next 64th outcome, made with outcomes that end no delivery).
    const latest = Math.max(model.now, ...model.deliveries.map((d) => d.endedAt ?? model.now));
    model.setClock(latest + RETAIN + 1);
    const n = model.kind === "memory" ? 1 : PURGE_EVERY - (model.completes % PURGE_EVERY);
    trail.push("(the final purge)");
    await explained(trail, model, async () => {
      await step(model, queue, { op: "burst", n, outcome: "defer" });
      await check(model, queue);
    });
    for (const d of model.deliveries) {
      expect(d.gone, `${d.id} (${d.state.status}) gone at the end`).toBe(hasEnded(d.state));
    }
  });
}

// --- The queues -----------------------------------------------------------------------------------------------------

// A step costs about a dozen statements with the check (six lists per endpoint): ~30 ms on PGlite, ~10 ms on the
// server on the 2-core machine, and a burst a few dozen more. So PostgreSQL runs a few short sequences (~2-5 s).
const RUNS: Record<string, { numRuns: number; maxLength: number }> = {
  memory: { numRuns: 60, maxLength: 40 },
  pglite: { numRuns: 5, maxLength: 25 },
  postgres: { numRuns: 5, maxLength: 25 },
};

describe("delivery queue retention against a reference model", () => {
  const queues = queuesUnderTest({ prefix: "model_circuits_ret", retainTerminalMs: RETAIN });

  describe.each(queues)("$name", (target) => {
    // Regression: the PostgreSQL queue dated a delivery ended by `update` with the `now` it was given (the admin's
    // clock, for its lease check), not its own clock, so one parked by an admin whose clock was behind was purged
    // by as much before its retention on the queue's clock (the memory queue dated it by its own clock).
    it("dates a delivery that `update` ended by the queue's clock, not by an admin's clock behind it", async () => {
      await run(target, [
        { op: "publish", endpoint: 1, delayMs: 0 },
        { op: "update", pick: 0, action: "endpoint_disabled", behind: 20_000 },
        { op: "tick", ms: 1_000 },
        { op: "burst", n: PURGE_EVERY, outcome: "retry" },
      ]);
    });

    const runs = RUNS[target.name] ?? { numRuns: 5, maxLength: 25 };
    it("purges only ended deliveries, only past their retention, whatever the clock does; lists agree", async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(commandArb, { minLength: 1, maxLength: runs.maxLength, size: "max" }), (commands) =>
          run(target, commands),
        ),
        { numRuns: runs.numRuns },
      );
    });
  });
});
