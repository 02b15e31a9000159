import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import type { AttemptResult } from "../../../../src/webhooks/delivery/attempt";
import type { DeliveryQueue } from "../../../../src/webhooks/delivery/delivery-queue";
import type { DeliveryRequest } from "../../../../src/webhooks/delivery/delivery-request";
import {
  type AttemptVerdict,
  type ClaimRequest,
  DeliveryScheduler,
  type SchedulerConfig,
} from "../../../../src/webhooks/delivery/delivery-scheduler";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../../src/webhooks/delivery/memory/index";
import { createDeliveryWorker, type DeliveryWorker } from "../../../../src/webhooks/delivery/node/index";
import type { DeliveryStatus } from "../../../../src/webhooks/delivery/state-machine";
import { scheduleBackoff } from "../../../../src/webhooks/retry/backoff";
import { endpointFixture } from "../store-contract";
import { fakeDispatcher } from "./fake-dispatcher";
import { publishCommand, untilQuiet } from "./worker-model-support";

// A model test of the delivery worker (issue 15): random commands against the worker on the memory queue, a fake clock
// and the fake dispatcher, each step checked against a plain model of what every delivery's state must be. Nothing
// waits for wall-clock time: the test waits until the worker has done all it can (settle), then checks.

const T0 = 1_700_000_000_000;
const CONCURRENCY = 4;
const ENDPOINT_CONCURRENCY = 2;
// Delays before each attempt (no jitter): attempts 2 and 3 wait 1 s and 3 s after the failure before them.
const DELAYS = [0, 1_000, 3_000] as const;
const MAX_ATTEMPTS = DELAYS.length;
// A slow endpoint answers 2xx once a request has been out this long (fake clock).
const SLOW_MS = 500;
// Longer than every run's fake clock moves: leases are renewed by a real-time heartbeat, which a fake clock that jumps
// outruns (not the worker's fault), so they are left out of this model (see lease tests in isolation.test.ts).
const LEASE_MS = 30 * 86_400_000;

type Behaviour = "2xx" | "5xx" | "hang" | "refuse" | "slow";

type Command =
  | { readonly type: "publish"; readonly to: number | "all"; readonly count: number }
  | { readonly type: "answer"; readonly endpoint: number }
  | { readonly type: "tick"; readonly ms: number }
  | { readonly type: "stop" };

// What the model knows of one delivery.
interface Modelled {
  readonly id: string;
  readonly endpoint: number;
  status: DeliveryStatus;
  attempts: number;
  /** When it is due (or was, when at or before the clock). */
  dueAt: number;
  /** An attempt of it is out at the dispatcher. */
  out: boolean;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** The answer an endpoint of `behaviour` gives to a request sent at `sentAt`, at `now`; `undefined`: none yet. */
function answerOf(behaviour: Behaviour, sentAt: number, now: number): AttemptResult | undefined {
  switch (behaviour) {
    case "2xx":
      return { kind: "response", status: 204, durationMs: 1 };
    case "5xx":
      return { kind: "response", status: 503, durationMs: 1 };
    case "refuse":
      return { kind: "error", errorKind: "connection_refused", durationMs: 1 };
    case "slow":
      return now - sentAt >= SLOW_MS ? { kind: "response", status: 200, durationMs: now - sentAt } : undefined;
    case "hang":
      return undefined;
  }
}

// The worker, its world, and the model, checked at every dispatch and after every command.
async function world(behaviours: readonly Behaviour[]) {
  const clock = { now: T0 };
  const endpoints = createMemoryEndpointStore();
  const queue: DeliveryQueue = createMemoryDeliveryQueue({ endpoints, now: () => clock.now });
  const fake = fakeDispatcher(() => true); // every request waits for the test to answer it
  const hosts = behaviours.map((_, i) => `e${i}.example`);
  const ids: string[] = [];
  for (const [i, host] of hosts.entries()) {
    const made = endpointFixture({ url: `https://${host}/hook`, enabledEvents: ["all.*", `only${i}.*`] });
    await endpoints.create(made);
    ids.push(made.id);
  }
  const deliveries = new Map<string, Modelled>(); // by `${host} ${event id}`
  const violations: string[] = [];
  const sentAt = new Map<DeliveryRequest, number>();
  const out = new Map<string, number>(); // attempts out per host
  let stopped = false;
  const keyOf = (request: DeliveryRequest) => `${new URL(request.url).host} ${request.headers["webhook-id"]}`;

  const dispatch = fake.dispatcher.dispatch.bind(fake.dispatcher);
  fake.dispatcher.dispatch = (request, options) => {
    const key = keyOf(request);
    const host = new URL(request.url).host;
    const delivery = deliveries.get(key);
    const total = [...out.values()].reduce((a, b) => a + b, 0);
    if (stopped) violations.push(`sent ${key} after stop() resolved`);
    if (total + 1 > CONCURRENCY) violations.push(`${total + 1} attempts out at once`);
    if ((out.get(host) ?? 0) + 1 > ENDPOINT_CONCURRENCY) violations.push(`${host}: over its cap`);
    if (delivery === undefined) violations.push(`sent ${key}, never published`);
    else {
      if (delivery.out) violations.push(`sent ${key} while an attempt of it is out`);
      if (delivery.status === "delivered" || delivery.status === "exhausted") {
        violations.push(`sent ${key}, ${delivery.status}`);
      }
      if (delivery.dueAt > clock.now) violations.push(`sent ${key} at ${clock.now}, due at ${delivery.dueAt}`);
      delivery.out = true;
    }
    out.set(host, (out.get(host) ?? 0) + 1);
    sentAt.set(request, clock.now);
    const sent = dispatch(request, options);
    // Registered before the worker's own handler: the count drops before the worker frees the slot.
    void sent.then(() => {
      out.set(host, (out.get(host) ?? 1) - 1);
      sentAt.delete(request);
      if (delivery !== undefined) delivery.out = false;
    });
    return sent;
  };

  // Every step of the queue the worker takes (claims, stores), counted: the worker is quiet when nothing moves.
  let moves = 0;
  const seen: DeliveryQueue = Object.assign(Object.create(queue) as DeliveryQueue, {
    claim: (...args: Parameters<DeliveryQueue["claim"]>) => {
      moves++;
      return queue.claim(...args);
    },
    complete: (...args: Parameters<DeliveryQueue["complete"]>) => {
      moves++;
      return queue.complete(...args);
    },
  });
  const worker: DeliveryWorker = createDeliveryWorker({
    queue: seen,
    endpoints,
    dispatcher: fake.dispatcher,
    now: () => clock.now,
    random: () => 0.5,
    concurrency: CONCURRENCY,
    endpointConcurrency: ENDPOINT_CONCURRENCY,
    retry: scheduleBackoff([...DELAYS], 0),
    circuit: false,
    disableAfterMs: Number.POSITIVE_INFINITY,
    leaseMs: LEASE_MS,
    stopGraceMs: 0,
  });
  cleanups.push(() => worker.stop());

  // Until nothing has moved for a few turns of the event loop.
  const settle = async () => {
    const print = () => `${fake.sent.length} ${fake.pending.size} ${worker.inFlight} ${moves}`;
    await untilQuiet(print);
  };

  async function run(command: Command): Promise<void> {
    switch (command.type) {
      case "publish": {
        for (const { id, endpointId, eventId } of await publishCommand(queue, clock.now, command.to, command.count)) {
          const endpoint = ids.indexOf(endpointId);
          deliveries.set(`${hosts[endpoint]} ${eventId}`, {
            id,
            endpoint,
            status: "pending",
            attempts: 0,
            dueAt: clock.now,
            out: false,
          });
        }
        return;
      }
      case "answer": {
        const behaviour = behaviours[command.endpoint] as Behaviour;
        for (const pending of [...fake.pending]) {
          const key = keyOf(pending.request);
          const delivery = deliveries.get(key);
          if (delivery?.endpoint !== command.endpoint) continue;
          const result = answerOf(behaviour, sentAt.get(pending.request) ?? clock.now, clock.now);
          if (result === undefined) continue;
          // Transition as the state machine documents it: 2xx delivered, else retried on the schedule until the last.
          delivery.attempts++;
          if (result.kind === "response" && result.status < 300) delivery.status = "delivered";
          else if (delivery.attempts >= MAX_ATTEMPTS) delivery.status = "exhausted";
          else {
            delivery.status = "failed";
            delivery.dueAt = clock.now + (DELAYS[delivery.attempts] as number);
          }
          pending.answer(result);
        }
        return;
      }
      case "tick":
        clock.now += command.ms;
        worker.wake();
        return;
      case "stop": {
        await worker.stop();
        stopped = true;
        await settle();
        // Aborted attempts went back uncounted, due at once (their model state is as before they went out).
        stopped = false;
        worker.start();
        return;
      }
    }
  }

  async function check(label: string): Promise<void> {
    expect(violations, label).toEqual([]);
    const now = clock.now;
    for (const [key, model] of deliveries) {
      const state = (await queue.get(model.id))?.state;
      const where = `${label}: ${key} (${behaviours[model.endpoint]})`;
      expect([state?.status, state?.attempts], where).toEqual([model.status, model.attempts]);
      if (model.status === "delivered" || model.status === "exhausted") continue;
      const due = state?.nextAttemptAt ?? Number.NaN;
      // Due later: exactly when the schedule says. Due now: perhaps handed back since (stop(), a full endpoint).
      if (model.dueAt > now) expect(due, where).toBe(model.dueAt);
      else {
        expect(due, where).toBeGreaterThanOrEqual(model.dueAt);
        expect(due, where).toBeLessThanOrEqual(now);
      }
    }
    // No starvation: an endpoint with a delivery due and none out waits only while every slot is taken.
    const total = [...out.values()].reduce((a, b) => a + b, 0);
    for (const [i, host] of hosts.entries()) {
      const due = [...deliveries.values()].some(
        (d) => d.endpoint === i && !d.out && d.dueAt <= now && (d.status === "pending" || d.status === "failed"),
      );
      if (due && (out.get(host) ?? 0) === 0)
        expect(total, `${label}: ${host} (${behaviours[i]}) starved`).toBe(CONCURRENCY);
    }
  }

  // Answers every endpoint until nothing is left but what hangs; the clock runs on when nobody has anything to answer.
  async function finish(): Promise<void> {
    const open = () =>
      [...deliveries.values()].some(
        (d) => behaviours[d.endpoint] !== "hang" && (d.status === "pending" || d.status === "failed"),
      );
    for (let round = 0; round < 500 && open(); round++) {
      const before = fake.sent.length + fake.pending.size;
      for (let i = 0; i < behaviours.length; i++) await run({ type: "answer", endpoint: i });
      await settle();
      if (fake.sent.length + fake.pending.size === before) {
        await run({ type: "tick", ms: 1_000 });
        await settle();
      }
      await check(`end round ${round}`);
    }
  }

  return { worker, deliveries, clock, settle, run, check, finish, behaviours };
}

const behaviour = fc.constantFrom<Behaviour>("2xx", "5xx", "hang", "refuse", "slow");
const commands = (endpoints: number) =>
  fc.array(
    fc.oneof(
      {
        weight: 3,
        arbitrary: fc.record({
          type: fc.constant("publish" as const),
          to: fc.oneof(fc.constant("all" as const), fc.nat(endpoints - 1)),
          count: fc.integer({ min: 1, max: 6 }),
        }),
      },
      { weight: 4, arbitrary: fc.record({ type: fc.constant("answer" as const), endpoint: fc.nat(endpoints - 1) }) },
      {
        weight: 2,
        arbitrary: fc.record({ type: fc.constant("tick" as const), ms: fc.constantFrom(1, 250, 500, 1_000, 3_000) }),
      },
      { weight: 1, arbitrary: fc.constant({ type: "stop" as const }) },
    ),
    { minLength: 1, maxLength: 40, size: "medium" },
  );
const scenario = fc
  .array(behaviour, { minLength: 2, maxLength: 5 })
  .map((rest): Behaviour[] => ["2xx", ...rest]) // at least one healthy endpoint
  // Each hanging endpoint holds one slot for good: with every slot held, nothing else can be served (by design).
  .filter((behaviours) => behaviours.filter((b) => b === "hang").length < CONCURRENCY)
  .chain((behaviours) => fc.tuple(fc.constant(behaviours), commands(behaviours.length)));

describe("delivery worker model (issue 15)", () => {
  it("keeps its caps, sends a delivery once at a time and on schedule, delivers at least once (property)", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ([behaviours, steps]) => {
        const w = await world(behaviours);
        w.worker.start();
        await w.settle();
        await w.check("start");
        for (const [n, step] of steps.entries()) {
          await w.run(step);
          await w.settle();
          await w.check(`step ${n} ${JSON.stringify(step)}`);
        }
        // To the end: answer everyone, and let the clock run whenever nobody has anything to answer.
        await w.finish();
        await w.worker.stop();
        for (const [key, d] of w.deliveries) {
          const expected = {
            "2xx": ["delivered", 1],
            slow: ["delivered", 1],
            "5xx": ["exhausted", MAX_ATTEMPTS],
            refuse: ["exhausted", MAX_ATTEMPTS],
            hang: ["pending", 0],
          }[behaviours[d.endpoint] as Behaviour];
          expect([d.status, d.attempts], key).toEqual(expected);
        }
      }),
      { numRuns: 40 },
    );
  });

  it("serves a healthy endpoint beside endpoints that hang: each hanging one holds one slot", async () => {
    const w = await world(["2xx", "hang", "hang", "hang"]);
    w.worker.start();
    await w.run({ type: "publish", to: "all", count: 6 });
    await w.settle();
    await w.check("published");
    for (let round = 0; round < 12; round++) {
      await w.run({ type: "answer", endpoint: 0 });
      await w.settle();
      await w.check(`round ${round}`);
    }
    const healthy = [...w.deliveries.values()].filter((d) => d.endpoint === 0);
    expect(healthy.map((d) => d.status)).toEqual(Array(6).fill("delivered"));
  });
});

// A reference scheduler written the naive way: every held delivery a record, every count recomputed from them.
class NaiveScheduler {
  readonly config: SchedulerConfig;
  readonly deliveries: { endpoint: string; storing: boolean }[] = [];
  readonly caps = new Map<string, number>();
  readonly sendingOf = new Map<string, number>();
  sending = 0;
  ahead: number;
  claiming = 0;
  starved = false;
  freed = 0;
  dry = false;

  constructor(config: SchedulerConfig) {
    this.config = config;
    this.ahead = config.lookahead;
  }

  cap(e: string): number {
    return this.caps.get(e) ?? 1;
  }
  #of(e: string, storing?: boolean): number {
    return this.deliveries.filter((d) => d.endpoint === e && (storing === undefined || d.storing === storing)).length;
  }
  // Outcomes being stored count against an endpoint only past one cap's worth, against the worker past `concurrency`.
  #occupying(e: string): number {
    return this.#of(e) - Math.min(this.#of(e, true), this.cap(e));
  }
  #room(): number {
    const storing = this.deliveries.filter((d) => d.storing).length;
    return this.config.concurrency + this.ahead - (this.deliveries.length - Math.min(storing, this.config.concurrency));
  }
  #left(e: string): void {
    this.freed++;
    if (this.#of(e, false) === (this.sendingOf.get(e) ?? 0)) this.dry = true;
  }

  hold(e: string): boolean {
    if (!this.caps.has(e)) this.caps.set(e, 1);
    if (this.#occupying(e) >= 2 * this.cap(e)) return false;
    this.deliveries.push({ endpoint: e, storing: false });
    return true;
  }
  takeEndpointSlot(e: string): boolean {
    if (!this.caps.has(e) || (this.sendingOf.get(e) ?? 0) >= this.cap(e)) return false;
    this.sendingOf.set(e, (this.sendingOf.get(e) ?? 0) + 1);
    return true;
  }
  freeEndpointSlot(e: string): void {
    this.sendingOf.set(e, (this.sendingOf.get(e) ?? 0) - 1);
  }
  takeSlot(): boolean {
    if (this.sending >= this.config.concurrency) return false;
    this.sending++;
    return true;
  }
  freeSlot(): void {
    this.sending--;
    if (this.claiming > 0) this.starved = true;
  }
  storing(e: string, verdict: AttemptVerdict): void {
    const d = this.deliveries.find((x) => x.endpoint === e && !x.storing);
    if (d === undefined) return;
    d.storing = true;
    this.#left(e);
    const cap = this.cap(e);
    if (verdict === "success") this.caps.set(e, Math.min(this.config.endpointConcurrency, cap + 1));
    if (verdict === "refused") this.caps.set(e, Math.max(1, Math.floor(cap / 2)));
    if (verdict === "unreachable") this.caps.set(e, 1);
  }
  finish(e: string, stored: boolean): void {
    const at = this.deliveries.findIndex((x) => x.endpoint === e && x.storing === stored);
    this.deliveries.splice(at, 1);
    if (!stored) this.#left(e);
  }
  wantsClaim(news: boolean): boolean {
    const room = this.#room();
    if (room < 1) return false;
    const { batch } = this.config;
    return news || this.dry || this.deliveries.length === 0 || (this.freed >= batch && room >= batch);
  }
  claimRequest(): ClaimRequest | undefined {
    const limit = this.#room();
    if (limit < 1) return undefined;
    this.claiming++;
    this.freed = 0;
    this.dry = false;
    const endpointLimits = new Map<string, number>();
    for (const e of this.caps.keys()) {
      const room = Math.max(0, 2 * this.cap(e) - this.#occupying(e));
      if (room !== 1) endpointLimits.set(e, room);
    }
    return { limit, perEndpoint: 1, endpointLimits };
  }
  claimed(): void {
    this.claiming = Math.max(0, this.claiming - 1);
    if (this.claiming > 0) return;
    const { lookahead, concurrency, batch } = this.config;
    this.ahead = this.starved
      ? Math.min(Math.max(lookahead, concurrency), this.ahead + batch)
      : Math.max(lookahead, this.ahead - 1);
    this.starved = false;
  }
}

type Op =
  | { readonly op: "hold" | "takeEndpointSlot" | "freeEndpointSlot" | "finish" | "stored"; readonly e: string }
  | { readonly op: "storing"; readonly e: string; readonly verdict: AttemptVerdict }
  | { readonly op: "takeSlot" | "freeSlot" | "claimRequest" | "claimed" }
  | { readonly op: "wantsClaim"; readonly news: boolean };

const endpointId = fc.constantFrom("a", "b", "c", "d");
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constantFrom("hold", "takeEndpointSlot", "freeEndpointSlot", "finish", "stored"), e: endpointId }),
  fc.record({
    op: fc.constant("storing" as const),
    e: endpointId,
    verdict: fc.constantFrom<AttemptVerdict>("success", "refused", "unreachable", "withheld"),
  }),
  fc.record({ op: fc.constantFrom("takeSlot", "freeSlot", "claimRequest", "claimed") }),
  fc.record({ op: fc.constant("wantsClaim" as const), news: fc.boolean() }),
);
const schedulerConfig = fc.record({
  concurrency: fc.integer({ min: 1, max: 8 }),
  endpointConcurrency: fc.integer({ min: 1, max: 6 }),
  lookahead: fc.integer({ min: 0, max: 6 }),
  batch: fc.integer({ min: 1, max: 4 }),
});

describe("DeliveryScheduler against a naive reference (issue 15)", () => {
  it("makes the same decisions for any sequence the worker may call it with (property)", () => {
    fc.assert(
      fc.property(schedulerConfig, fc.array(op, { maxLength: 300, size: "max" }), (config, ops) => {
        const real = new DeliveryScheduler(config);
        const naive = new NaiveScheduler(config);
        const count = (e: string, storing: boolean) =>
          naive.deliveries.filter((d) => d.endpoint === e && d.storing === storing).length;
        for (const [n, step] of ops.entries()) {
          const at = `op ${n} ${JSON.stringify(step)}`;
          // Only the calls the worker makes: a place, a slot or a delivery is given back only when it was taken.
          switch (step.op) {
            case "hold":
              expect(real.hold(step.e), at).toBe(naive.hold(step.e));
              break;
            case "takeEndpointSlot":
              expect(real.takeEndpointSlot(step.e), at).toBe(naive.takeEndpointSlot(step.e));
              break;
            case "freeEndpointSlot":
              if ((naive.sendingOf.get(step.e) ?? 0) > 0) {
                real.freeEndpointSlot(step.e);
                naive.freeEndpointSlot(step.e);
              }
              break;
            case "takeSlot":
              expect(real.takeSlot(), at).toBe(naive.takeSlot());
              break;
            case "freeSlot":
              if (naive.sending > 0) {
                real.freeSlot();
                naive.freeSlot();
              }
              break;
            case "storing":
              if (count(step.e, false) > 0) {
                real.storing(step.e, step.verdict);
                naive.storing(step.e, step.verdict);
              }
              break;
            case "finish":
            case "stored": {
              const stored = step.op === "stored";
              if (count(step.e, stored) > 0) {
                real.finish(step.e, stored);
                naive.finish(step.e, stored);
              }
              break;
            }
            case "claimRequest":
              expect(real.claimRequest(), at).toEqual(naive.claimRequest());
              break;
            case "claimed":
              real.claimed();
              naive.claimed();
              break;
            case "wantsClaim":
              expect(real.wantsClaim(step.news), at).toBe(naive.wantsClaim(step.news));
              break;
          }
          expect([real.held, real.sending, real.lookahead], at).toEqual([
            naive.deliveries.length,
            naive.sending,
            naive.ahead,
          ]);
          for (const e of ["a", "b", "c", "d"]) expect(real.capOf(e), `${at}: cap of ${e}`).toBe(naive.cap(e));
        }
      }),
      { numRuns: 200 },
    );
  });
});
