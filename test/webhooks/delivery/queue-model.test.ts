import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AttemptInput, DeliveryErrorKind } from "../../../src/webhooks/delivery/attempt";
import type {
  ClaimedDelivery,
  ClaimOptions,
  DeliveryQueue,
  DeliveryRecord,
} from "../../../src/webhooks/delivery/delivery-queue";
import { createEvent } from "../../../src/webhooks/delivery/event";
import {
  DELIVERY_STATUSES,
  type DeliveryEvent,
  type DeliveryState,
  type DeliveryStatus,
} from "../../../src/webhooks/delivery/state-machine";
import type { DeliveryStores } from "./delivery-stores";
import {
  nextState,
  type Outcome,
  outcomeEvent,
  type QueueKind,
  type QueueUnderTest,
  queuesUnderTest,
} from "./queue-model-support";
import { endpointFixture } from "./store-contract";

// A model-based test of the DeliveryQueue contract (delivery-queue.ts): random sequences of publish, claim, renew,
// complete, update and clock steps run against a small reference model written here (it shares no code with the
// queues), on the memory queue, PGlite and the PostgreSQL server. Every time is explicit (a fake clock, also the
// queues' own `now` option): nothing reads the wall clock. Times are whole milliseconds, as a worker's clock gives
// them (a fraction is floored by every store alike: src/webhooks/whole-ms.ts, tested in store-contract.ts).

const T0 = 1_700_000_000_000;

// --- The endpoints every run publishes to -------------------------------------------------------------------------

interface ModelEndpoint {
  readonly id: string;
  readonly tenant: string | null;
  readonly allTenants: boolean;
  readonly enabledEvents: readonly string[];
  readonly enabled: boolean;
}

const ENDPOINTS: readonly ModelEndpoint[] = [
  { id: "we_a", tenant: null, allTenants: false, enabledEvents: ["order.*"], enabled: true },
  { id: "we_b", tenant: null, allTenants: true, enabledEvents: ["invoice.paid", "order.created"], enabled: true },
  { id: "we_c", tenant: "t1", allTenants: false, enabledEvents: ["*"], enabled: true },
  { id: "we_d", tenant: "t2", allTenants: false, enabledEvents: ["order.created"], enabled: true },
  { id: "we_e", tenant: "t1", allTenants: false, enabledEvents: ["*"], enabled: false },
];
const ENDPOINT_IDS = ENDPOINTS.map((e) => e.id);

// The model's own reading of subscriptions (docs/webhooks-providers.md, "Tenants"; PublishOptions.tenant).
const subscribes = (patterns: readonly string[], type: string): boolean =>
  patterns.some((p) => p === "*" || p === type || (p.endsWith(".*") && type.startsWith(p.slice(0, -1))));
const receives = (e: ModelEndpoint, tenant: string | null): boolean =>
  e.tenant === tenant || (tenant !== null && e.tenant === null && e.allTenants);

// --- Commands -------------------------------------------------------------------------------------------------------

type Command =
  | {
      op: "publish";
      eventId: string;
      type: string;
      tenant: string | undefined;
      delayMs: number;
      endpointId: string | undefined;
    }
  | {
      op: "claim";
      limit: number;
      perEndpoint: number | undefined;
      endpointLimits: [string, number][] | undefined;
      leaseMs: number;
      behind: number;
    }
  | { op: "renew"; picks: number[]; leaseMs: number; behind: number }
  | { op: "complete"; pick: number; outcome: Outcome; log: boolean; twice: Outcome | undefined }
  | { op: "update"; pick: number; action: "manual_retry" | "endpoint_disabled" | "defer"; from: DeliveryStatus[] }
  | {
      op: "list";
      endpointId: string;
      status: DeliveryStatus[] | undefined;
      limit: number;
      eventId: string | undefined;
      lastErrorKind: DeliveryErrorKind | undefined;
      sinceMs: number | undefined;
    }
  | { op: "tick"; ms: number };

const publishCommand = fc.record({
  op: fc.constant("publish" as const),
  // A few ids, so that some are published again (a no-op in their tenant's scope, another event in another's).
  eventId: fc.integer({ min: 1, max: 12 }).map((n) => `evt_${n}`),
  type: fc.constantFrom("order.created", "order.paid", "invoice.paid"),
  tenant: fc.constantFrom(undefined, "t1", "t2"),
  delayMs: fc.constantFrom(0, 0, 1_000, 60_000),
  endpointId: fc.option(fc.constantFrom(...ENDPOINT_IDS), { nil: undefined, freq: 5 }),
});
const leaseMs = fc.constantFrom(1, 1_000, 30_000, 60_000);
// How far the clock of the worker that claims or renews is behind the model's (several processes on one queue).
const behind = fc.constantFrom(0, 0, 0, 0, 2_000, 45_000);
// Claims with a choice: a small limit, per-endpoint caps and rooms.
const freeClaim = fc.record({
  op: fc.constant("claim" as const),
  limit: fc.integer({ min: 0, max: 4 }),
  perEndpoint: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
  endpointLimits: fc.option(fc.array(fc.tuple(fc.constantFrom(...ENDPOINT_IDS), fc.integer({ min: 0, max: 2 }))), {
    nil: undefined,
  }),
  leaseMs,
  behind,
});
// Claims that leave no choice: every due delivery, but those of endpoints given no room. All queues must agree.
const forcedClaim = fc.record({
  op: fc.constant("claim" as const),
  limit: fc.constant(1_000),
  perEndpoint: fc.constantFrom(undefined, 1_000),
  endpointLimits: fc.option(fc.array(fc.tuple(fc.constantFrom(...ENDPOINT_IDS), fc.constantFrom(0, 1_000))), {
    nil: undefined,
  }),
  leaseMs,
  behind,
});
const pick = fc.nat({ max: 1_000 });
const otherCommands = [
  fc.record({
    op: fc.constant("renew" as const),
    picks: fc.array(pick, { minLength: 1, maxLength: 3 }),
    leaseMs,
    behind,
  }),
  fc.record({
    op: fc.constant("complete" as const),
    pick,
    outcome: fc.constantFrom<Outcome>(
      "delivered",
      "retry",
      "retry",
      "retry_after",
      "gone",
      "timeout",
      "url_refused",
      "defer",
      "parked",
    ),
    log: fc.boolean(),
    // A second outcome for the same claim stored at once (two workers' answers in one group commit).
    twice: fc.option(fc.constantFrom<Outcome>("delivered", "retry", "parked"), { nil: undefined, freq: 4 }),
  }),
  fc.record({
    op: fc.constant("update" as const),
    pick,
    action: fc.constantFrom("manual_retry" as const, "endpoint_disabled" as const, "defer" as const),
    from: fc.subarray([...DELIVERY_STATUSES], { minLength: 1 }),
  }),
  fc.record({
    op: fc.constant("list" as const),
    endpointId: fc.constantFrom(...ENDPOINT_IDS),
    status: fc.option(fc.subarray([...DELIVERY_STATUSES], { minLength: 1 }), { nil: undefined }),
    limit: fc.integer({ min: 1, max: 3 }),
    eventId: fc.option(
      fc.integer({ min: 1, max: 12 }).map((n) => `evt_${n}`),
      { nil: undefined, freq: 3 },
    ),
    lastErrorKind: fc.option(fc.constantFrom<DeliveryErrorKind>("endpoint_disabled", "http_status", "timeout"), {
      nil: undefined,
      freq: 3,
    }),
    sinceMs: fc.option(fc.constantFrom(0, 60_000, 3_600_000), { nil: undefined, freq: 3 }),
  }),
  fc.record({ op: fc.constant("tick" as const), ms: fc.constantFrom(1, 999, 1_000, 5_000, 30_000, 60_000, 3_600_000) }),
] as const;
const commandsOf = (claim: typeof freeClaim, maxLength: number): fc.Arbitrary<Command[]> =>
  fc.array(
    fc.oneof(
      { arbitrary: publishCommand, weight: 4 },
      { arbitrary: claim, weight: 3 },
      ...otherCommands.map((arbitrary) => ({ arbitrary, weight: arbitrary === otherCommands[1] ? 3 : 2 })),
    ),
    { minLength: 1, maxLength, size: "max" },
  );

// --- The model ------------------------------------------------------------------------------------------------------

interface ModelDelivery {
  /** Its identity in every queue: tenant scope, event id, endpoint (ids are random per queue). */
  readonly key: string;
  readonly id: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly endpointId: string;
  readonly tenant: string | undefined;
  readonly createdAt: number;
  readonly payload: string;
  state: DeliveryState;
  lease: { token: string; until: number } | undefined;
}

const scheduled = (d: ModelDelivery) => d.state.status === "pending" || d.state.status === "failed";
// DeliveryQueue: due at or before `now`, and a claim whose lease ran out is due again.
const isDue = (d: ModelDelivery, now: number) =>
  scheduled(d) && (d.state.nextAttemptAt as number) <= now && (d.lease === undefined || d.lease.until <= now);
// When it falls due (nextDueAt: "leased ones included at their lease end").
const dueAt = (d: ModelDelivery) =>
  d.lease === undefined ? (d.state.nextAttemptAt as number) : Math.max(d.state.nextAttemptAt as number, d.lease.until);
// "Oldest due first within an endpoint": the memory queue counts a delivery whose lease ran out as due at its lease
// end, the PostgreSQL queue at the due time it had when claimed (docs/webhooks-providers.md, "Fair claims").
const claimOrder = (kind: QueueKind, d: ModelDelivery) =>
  kind === "memory" ? dueAt(d) : (d.state.nextAttemptAt as number);

function expectedRecord(d: ModelDelivery): DeliveryRecord {
  return {
    id: d.id,
    eventId: d.eventId,
    eventType: d.eventType,
    endpointId: d.endpointId,
    ...(d.tenant === undefined ? {} : { tenant: d.tenant }),
    payload: d.payload,
    createdAt: d.createdAt,
    state: d.state,
  };
}

class Model {
  now = T0;
  readonly deliveries: ModelDelivery[] = [];
  readonly byId = new Map<string, ModelDelivery>();
  /** Every claim any queue call returned, stale ones too, in a stable order: what renew and complete pick from. */
  readonly claims: ClaimedDelivery[] = [];
  /** Attempt log lines per endpoint, oldest first. */
  readonly log = new Map<string, AttemptInput[]>();
  /** What each step answered, with the queue's random ids as the model's keys, for the differential check. */
  readonly trace: unknown[] = [];
  /** The deliveries the last step claimed or wrote, which the check reads back with `get`. */
  readonly touched = new Set<ModelDelivery>();

  constructor(readonly kind: QueueKind) {}

  keyOf = (id: string) => this.byId.get(id)?.key ?? `unknown ${id}`;

  nextDueAt(): number | undefined {
    const times = this.deliveries.filter(scheduled).map(dueAt);
    return times.length === 0 ? undefined : Math.min(...times);
  }
}

// --- Running the commands -------------------------------------------------------------------------------------------

async function setUp(stores: DeliveryStores): Promise<void> {
  for (const [n, e] of ENDPOINTS.entries()) {
    await stores.endpoints.create(
      endpointFixture({
        id: e.id,
        tenant: e.tenant,
        allTenants: e.allTenants,
        enabledEvents: [...e.enabledEvents],
        createdAt: T0 - 1_000 + n,
        ...(e.enabled ? {} : { status: "disabled", disabledReason: "manual", disabledAt: T0 - 1 }),
      }),
    );
  }
}

const sortedKeys = (model: Model, ids: readonly string[]) => ids.map(model.keyOf).sort();

async function publish(model: Model, queue: DeliveryQueue, c: Extract<Command, { op: "publish" }>): Promise<void> {
  const now = model.now;
  const event = createEvent({ id: c.eventId, type: c.type, data: { n: model.deliveries.length }, now });
  const { deliveryIds } = await queue.publish(event, {
    now,
    delayMs: c.delayMs,
    tenant: c.tenant,
    endpointId: c.endpointId,
  });
  const tenant = c.tenant ?? null;
  const scope = `${c.tenant ?? ""}\n${c.eventId}`;
  // DeliveryQueue.publish: a no-op while any delivery of the id in the tenant's scope is kept (all are, here).
  const published = model.deliveries.some((d) => d.key.startsWith(`${scope}\n`));
  const targets = published
    ? []
    : ENDPOINTS.filter(
        (e) =>
          e.enabled &&
          receives(e, tenant) &&
          (c.endpointId === undefined ? subscribes(e.enabledEvents, c.type) : e.id === c.endpointId),
      );
  expect(new Set(deliveryIds).size).toBe(deliveryIds.length);
  const made: ModelDelivery[] = [];
  for (const id of deliveryIds) {
    const record = await queue.get(id);
    expect(record, "a published delivery is there").toBeDefined();
    const endpointId = (record as DeliveryRecord).endpointId;
    made.push({
      key: `${scope}\n${endpointId}`,
      id,
      eventId: c.eventId,
      eventType: c.type,
      endpointId,
      tenant: c.tenant,
      createdAt: now,
      payload: JSON.stringify(event),
      state: {
        status: "pending",
        attempts: 0,
        nextAttemptAt: now + c.delayMs,
        lastAttemptAt: null,
        lastStatus: null,
        lastErrorKind: null,
        deliveredAt: null,
      },
      lease: undefined,
    });
  }
  expect(made.map((d) => d.endpointId).sort()).toEqual(targets.map((e) => e.id).sort());
  made.sort((x, y) => (x.key < y.key ? -1 : 1));
  for (const d of made) {
    model.deliveries.push(d);
    model.byId.set(d.id, d);
    model.touched.add(d);
  }
  model.trace.push(["publish", made.map((d) => d.key)]);
}

async function claim(model: Model, queue: DeliveryQueue, c: Extract<Command, { op: "claim" }>): Promise<void> {
  const now = model.now - c.behind;
  const endpointLimits = c.endpointLimits === undefined ? undefined : new Map(c.endpointLimits);
  const options: ClaimOptions = { limit: c.limit, now, leaseMs: c.leaseMs, perEndpoint: c.perEndpoint, endpointLimits };
  const claimed = await queue.claim(options);
  const cap = (endpointId: string) => endpointLimits?.get(endpointId) ?? c.perEndpoint ?? c.limit;
  const due = model.deliveries.filter((d) => isDue(d, now));
  const ids = claimed.map((x) => x.id);
  expect(new Set(ids).size, "one claim never returns a delivery twice").toBe(ids.length);
  expect(claimed.length, "never more than limit").toBeLessThanOrEqual(c.limit);
  for (const x of claimed) {
    const d = model.byId.get(x.id);
    expect(d, "a claim returns only deliveries that were published").toBeDefined();
    const delivery = d as ModelDelivery;
    // Only due deliveries: scheduled (never terminal), due by now, and no lease still held by another claim.
    expect(isDue(delivery, now), `claimed ${delivery.key} is not due at ${now}`).toBe(true);
    expect(x).toEqual({
      ...expectedRecord(delivery),
      leaseToken: x.leaseToken,
      leaseUntil: now + c.leaseMs,
      ...(delivery.tenant === undefined ? { operatorEvent: true } : {}),
    });
  }
  let most = 0;
  for (const endpointId of ENDPOINT_IDS) {
    const mine = claimed.filter((x) => x.endpointId === endpointId).map((x) => model.byId.get(x.id) as ModelDelivery);
    const waiting = due.filter((d) => d.endpointId === endpointId && !ids.includes(d.id));
    expect(mine.length, `never more than the room of ${endpointId}`).toBeLessThanOrEqual(cap(endpointId));
    most += Math.min(cap(endpointId), mine.length + waiting.length);
    // Oldest due first within an endpoint: none left waiting was due before one claimed.
    const latestClaimed = Math.max(...mine.map((d) => claimOrder(model.kind, d)));
    for (const d of waiting) expect(claimOrder(model.kind, d)).toBeGreaterThanOrEqual(latestClaimed);
  }
  // Nothing is lost: every due delivery is claimable, so a claim takes as many as its limit and rooms let it.
  expect(claimed.length, "a claim takes every due delivery its limit and rooms allow").toBe(Math.min(c.limit, most));
  for (const x of claimed) {
    const d = model.byId.get(x.id) as ModelDelivery;
    d.lease = { token: x.leaseToken, until: x.leaseUntil };
    model.touched.add(d);
  }
  const ordered = [...claimed].sort((x, y) => (model.keyOf(x.id) < model.keyOf(y.id) ? -1 : 1));
  model.claims.push(...ordered);
  model.trace.push(["claim", ordered.map((x) => model.keyOf(x.id))]);
}

async function renew(model: Model, queue: DeliveryQueue, c: Extract<Command, { op: "renew" }>): Promise<void> {
  if (model.claims.length === 0) return;
  const now = model.now - c.behind;
  const claims = c.picks.map((n) => model.claims[n % model.claims.length] as ClaimedDelivery);
  const renewed = await queue.renew(claims, now, c.leaseMs);
  // Fencing: only a claim whose lease no other claim took over (nor complete/update ended) is renewed.
  const held = claims.filter((x) => model.byId.get(x.id)?.lease?.token === x.leaseToken);
  expect([...new Set(renewed)].sort()).toEqual([...new Set(held.map((x) => x.id))].sort());
  for (const x of held) {
    const d = model.byId.get(x.id) as ModelDelivery;
    d.lease = { token: x.leaseToken, until: now + c.leaseMs };
    model.touched.add(d);
  }
  model.trace.push(["renew", [...new Set(sortedKeys(model, renewed))]]);
}

async function complete(model: Model, queue: DeliveryQueue, c: Extract<Command, { op: "complete" }>): Promise<void> {
  if (model.claims.length === 0) return;
  const now = model.now;
  const x = model.claims[c.pick % model.claims.length] as ClaimedDelivery;
  const event = outcomeEvent(c.outcome, now);
  const state = nextState(x.state, event, now);
  const attempt: AttemptInput | undefined =
    c.log && event.type === "attempt"
      ? {
          deliveryId: x.id,
          endpointId: x.endpointId,
          eventId: x.eventId,
          attempt: x.state.attempts + 1,
          startedAt: now,
          durationMs: event.result.durationMs,
          status: event.result.status ?? null,
          errorKind: event.result.kind === "error" ? event.result.errorKind : null,
          response: "ok",
        }
      : undefined;
  const d = model.byId.get(x.id) as ModelDelivery;
  const before = d.state;
  const expected = d.lease?.token === x.leaseToken;
  model.touched.add(d);
  // Of two outcomes stored at once for one claim, the first is written and the second answered `false`.
  const second = c.twice === undefined ? undefined : nextState(x.state, outcomeEvent(c.twice, now), now);
  const [stored, again] = await Promise.all([
    queue.complete(x, state, attempt),
    second === undefined ? false : queue.complete(x, second),
  ]);
  expect(again, "a second outcome of one claim").toBe(false);
  // Fencing: a lease taken over by another claim, or ended, completes nothing (and `false` says so).
  expect(stored, `complete of ${d.key} (${c.outcome}) with ${expected ? "a held" : "a stale"} lease`).toBe(expected);
  if (expected) {
    d.state = state;
    d.lease = undefined;
  } else {
    expect(d.state).toBe(before);
  }
  // "the log line is kept either way".
  if (attempt !== undefined) model.log.set(x.endpointId, [...(model.log.get(x.endpointId) ?? []), attempt]);
  model.trace.push(["complete", d.key, stored]);
}

async function update(model: Model, queue: DeliveryQueue, c: Extract<Command, { op: "update" }>): Promise<void> {
  if (model.deliveries.length === 0) return;
  const now = model.now;
  const d = model.deliveries[c.pick % model.deliveries.length] as ModelDelivery;
  const event: DeliveryEvent =
    c.action === "defer" ? { type: "defer", until: now + 5_000 } : ({ type: c.action } as DeliveryEvent);
  const state = nextState(d.state, event, now);
  const stored = await queue.update(d.id, c.from, state, now);
  // "if the delivery is still in one of `from` and not leased at `now`".
  const expected = c.from.includes(d.state.status) && (d.lease === undefined || d.lease.until <= now);
  model.touched.add(d);
  expect(stored, `update of ${d.key} from ${c.from.join("/")} (${c.action})`).toBe(expected);
  if (expected) {
    d.state = state;
    d.lease = undefined;
  }
  model.trace.push(["update", d.key, stored]);
}

async function list(model: Model, queue: DeliveryQueue, c: Extract<Command, { op: "list" }>): Promise<void> {
  const since = c.sinceMs === undefined ? undefined : model.now - c.sinceMs;
  const wanted = model.deliveries.filter(
    (d) =>
      d.endpointId === c.endpointId &&
      (c.status === undefined || c.status.includes(d.state.status)) &&
      (c.eventId === undefined || d.eventId === c.eventId) &&
      (c.lastErrorKind === undefined || d.state.lastErrorKind === c.lastErrorKind) &&
      (since === undefined || d.createdAt >= since),
  );
  const seen: DeliveryRecord[] = [];
  let after: string | undefined;
  const filters = { status: c.status, limit: c.limit, eventId: c.eventId, lastErrorKind: c.lastErrorKind, since };
  for (let page = 0; page <= wanted.length; page++) {
    const rows = await queue.list(c.endpointId, { ...filters, startingAfter: after });
    expect(rows.length).toBeLessThanOrEqual(c.limit);
    seen.push(...rows);
    if (rows.length < c.limit) break;
    after = rows.at(-1)?.id;
  }
  // Newest first by creation time, page by page; those created in one millisecond in no particular order.
  for (let i = 1; i < seen.length; i++) {
    expect((seen[i] as DeliveryRecord).createdAt).toBeLessThanOrEqual((seen[i - 1] as DeliveryRecord).createdAt);
  }
  const byKey = (records: readonly DeliveryRecord[]) =>
    [...records].sort((x, y) => (model.keyOf(x.id) < model.keyOf(y.id) ? -1 : 1));
  expect(byKey(seen)).toEqual(byKey(wanted.map(expectedRecord)));
  model.trace.push(["list", seen.map((r) => model.keyOf(r.id)).sort()]);
}

/**
 * `get`, `list` and `nextDueAt` agree with the model: every delivery through its endpoint's list (one statement each),
 * and through `get` those the step touched.
 */
async function check(model: Model, queue: DeliveryQueue): Promise<void> {
  for (const d of model.touched) expect(await queue.get(d.id)).toEqual(expectedRecord(d));
  model.touched.clear();
  const byId = (records: readonly DeliveryRecord[]) => [...records].sort((x, y) => (x.id < y.id ? -1 : 1));
  for (const endpointId of ENDPOINT_IDS) {
    const rows = await queue.list(endpointId);
    const mine = model.deliveries.filter((d) => d.endpointId === endpointId);
    expect(byId(rows)).toEqual(byId(mine.map(expectedRecord)));
  }
  const next = await queue.nextDueAt();
  expect(next, "nextDueAt").toBe(model.nextDueAt());
  model.trace.push(["state", model.deliveries.map((d) => [d.key, d.state, d.lease?.until ?? null]), next]);
}

/** Runs `commands` on a fresh queue, checking every step; answers the model (its trace for the differential). */
async function run(target: QueueUnderTest, commands: readonly Command[]): Promise<Model> {
  const model = new Model(target.kind);
  const clock = () => model.now;
  return target.withQueue(clock, async (stores) => {
    await setUp(stores);
    const { queue } = stores;
    expect(await queue.get("dlv_missing")).toBeUndefined();
    for (const c of commands) {
      switch (c.op) {
        case "publish":
          await publish(model, queue, c);
          break;
        case "claim":
          await claim(model, queue, c);
          break;
        case "renew":
          await renew(model, queue, c);
          break;
        case "complete":
          await complete(model, queue, c);
          break;
        case "update":
          await update(model, queue, c);
          break;
        case "list":
          await list(model, queue, c);
          break;
        case "tick":
          model.now += c.ms;
          break;
      }
      await check(model, queue);
    }
    // Nothing published is lost: once every due time and lease has passed, one claim takes every scheduled delivery.
    model.now += 2 * 86_400_000;
    const all = { limit: 1_000, perEndpoint: undefined, endpointLimits: undefined, leaseMs: 1, behind: 0 };
    await claim(model, queue, { op: "claim", ...all });
    const claimed = model.trace.at(-1) as [string, string[]];
    expect(claimed[1]).toEqual(
      model.deliveries
        .filter(scheduled)
        .map((d) => d.key)
        .sort(),
    );
    // The attempt log: every line written, newest first, whether its outcome was stored or not.
    for (const endpointId of ENDPOINT_IDS) {
      const lines = await queue.attempts({ endpointId, limit: 1_000 });
      expect(lines.map(({ id: _, ...line }) => line)).toEqual([...(model.log.get(endpointId) ?? [])].reverse());
      expect(new Set(lines.map((line) => line.id)).size).toBe(lines.length);
    }
    return model;
  });
}

// --- The queues -----------------------------------------------------------------------------------------------------

// Runs per queue, and the longest sequence: the memory queue costs microseconds a step; on PGlite a step's statements
// (about eight with the checks) cost ~25 ms on the 2-core machine, on the server ~8 ms, after a first migration of
// ~2 s and ~1 s. So PGlite and the server run fewer, shorter sequences (~3 s each), and the differential run (all
// three queues on the same sequence, in parallel) fewer still: the file stays within its ~20 s.
const RUNS: Record<string, { numRuns: number; maxLength: number }> = {
  memory: { numRuns: 120, maxLength: 40 },
  pglite: { numRuns: 6, maxLength: 30 },
  postgres: { numRuns: 8, maxLength: 30 },
};
const DIFFERENTIAL = { numRuns: 5, maxLength: 30 };

describe("DeliveryQueue against a reference model", () => {
  const queues = queuesUnderTest({ prefix: "wqmodel" });

  describe.each(queues)("$name", (target) => {
    const runs = RUNS[target.name] ?? { numRuns: 8, maxLength: 30 };
    it("keeps every promise of the contract through random claims, renewals, outcomes and manual actions", async () => {
      await fc.assert(
        fc.asyncProperty(commandsOf(freeClaim, runs.maxLength), async (commands) => {
          await run(target, commands);
        }),
        { numRuns: runs.numRuns },
      );
    });
  });

  it("gives the same answers on every queue where a claim leaves no choice (differential)", async () => {
    await fc.assert(
      fc.asyncProperty(commandsOf(forcedClaim, DIFFERENTIAL.maxLength), async (commands) => {
        // Every run settles before the property answers: a run left going would write into the next run's tables.
        const settled = await Promise.allSettled(queues.map((target) => run(target, commands)));
        const models = settled.map((result) => {
          if (result.status === "rejected") throw result.reason;
          return result.value;
        });
        const [first, ...others] = models as [Model, ...Model[]];
        for (const other of others) expect(other.trace).toEqual(first.trace);
      }),
      { numRuns: DIFFERENTIAL.numRuns },
    );
  });
});
