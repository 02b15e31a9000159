import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { createEndpointRateLimiter } from "../../../../src/ratelimit/endpoint-limiter";
import type { AttemptResult } from "../../../../src/webhooks/delivery/attempt";
import type { DeliveryQueue } from "../../../../src/webhooks/delivery/delivery-queue";
import type { DeliveryRequest } from "../../../../src/webhooks/delivery/delivery-request";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../../src/webhooks/delivery/memory/index";
import {
  createDeliveryWorker,
  type DeliveryWorker,
  type DeliveryWorkerEvent,
} from "../../../../src/webhooks/delivery/node/index";
import type { DeliveryStatus } from "../../../../src/webhooks/delivery/state-machine";
import { scheduleBackoff } from "../../../../src/webhooks/retry/backoff";
import { endpointFixture } from "../store-contract";
import { fakeDispatcher } from "./fake-dispatcher";
import { type Behaviour, circuitCommands, publishCommand, untilQuiet } from "./worker-model-support";

// A model test of the delivery worker's circuit breaker and per-endpoint rate limit: random commands (publish, set an
// endpoint's behaviour, answer, tick the fake clock) against the worker on the memory queue, each step checked against
// a plain model written here. As in worker-model.test.ts nothing waits for wall-clock time: the test waits until the
// worker has done all it can (settle), then checks.

const T0 = 1_700_000_000_000;
const CONCURRENCY = 4;
const ENDPOINT_CONCURRENCY = 2;
// Delays before each attempt (no jitter).
const DELAYS = [0, 500, 1_000, 2_000] as const;
const MAX_ATTEMPTS = DELAYS.length;
// Longer than every run's fake clock moves (see worker-model.test.ts: the heartbeat runs on real time).
const LEASE_MS = 30 * 86_400_000;
const CIRCUIT = { window: 4, minimumAttempts: 3, failureRatio: 0.6, coolDownMs: 2_000 } as const;
// The endpoint pacer's burst (createEndpointRateLimiter's `burst`).
const BURST = 2;

type CircuitStatus = "closed" | "open" | "half_open";

type Command =
  | { readonly type: "publish"; readonly to: number | "all"; readonly count: number }
  | { readonly type: "behave"; readonly endpoint: number; readonly behaviour: Behaviour }
  | { readonly type: "answer"; readonly endpoint: number }
  | { readonly type: "tick"; readonly ms: number };

// What the model knows of one delivery.
interface Modelled {
  readonly id: string;
  readonly endpoint: number;
  status: DeliveryStatus;
  attempts: number;
  /** When it is due by the retry schedule (a deferral may put it later, never earlier). */
  dueAt: number;
  /** An attempt of it is out at the dispatcher. */
  out: boolean;
}

// What the model knows of one endpoint's circuit (circuit-breaker.ts's rules, restated).
interface CircuitModel {
  status: CircuitStatus;
  /** The window: `true` a failure, most recent last. */
  outcomes: boolean[];
  /** When it last opened. */
  openedAt: number;
  /** When the last probe of the half-open circuit went out; `undefined`: none yet. */
  probeAt: number | undefined;
  /** Changes the model decided from answers ("open", "closed") that the worker has not announced yet. */
  expected: CircuitStatus[];
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** The answer an endpoint of `behaviour` gives; `undefined`: none (it hangs). Each is the endpoint's answer. */
function answerOf(behaviour: Behaviour): AttemptResult | undefined {
  switch (behaviour) {
    case "2xx":
      return { kind: "response", status: 204, durationMs: 1 };
    case "5xx":
      return { kind: "response", status: 503, durationMs: 1 };
    case "refuse":
      return { kind: "error", errorKind: "connection_refused", durationMs: 1 };
    case "hang":
      return undefined;
  }
}

interface Scenario {
  /** Each endpoint's `rateLimit` (deliveries per second), `null` for none; endpoint 0 always has one. */
  readonly rates: readonly (number | null)[];
  /** Whether the queue shares its circuit board (the memory queue does); else each worker's own circuit decides. */
  readonly shared: boolean;
}

// The worker, its world, and the model, checked at every dispatch and circuit event and after every command.
async function world({ rates, shared }: Scenario) {
  const clock = { now: T0 };
  const behaviours: Behaviour[] = rates.map(() => "2xx");
  const endpoints = createMemoryEndpointStore();
  const queue: DeliveryQueue = createMemoryDeliveryQueue({ endpoints, now: () => clock.now });
  const fake = fakeDispatcher(() => true); // every request waits for the test to answer it
  const hosts = rates.map((_, i) => `e${i}.example`);
  const ids: string[] = [];
  for (const [i, host] of hosts.entries()) {
    const made = endpointFixture({
      url: `https://${host}/hook`,
      enabledEvents: ["all.*", `only${i}.*`],
      rateLimit: rates[i] ?? null,
    });
    await endpoints.create(made);
    ids.push(made.id);
  }
  const deliveries = new Map<string, Modelled>(); // by `${host} ${event id}`
  const circuits: CircuitModel[] = rates.map(() => ({
    status: "closed",
    outcomes: [],
    openedAt: 0,
    probeAt: undefined,
    expected: [],
  }));
  // Every attempt's start on the fake clock, per endpoint, in order.
  const starts: number[][] = rates.map(() => []);
  const violations: string[] = [];
  const out = new Map<string, number>(); // attempts out per host
  const keyOf = (request: DeliveryRequest) => `${new URL(request.url).host} ${request.headers["webhook-id"]}`;
  // With a shared board a probe won and never reported is another's after probeHoldMs (here the lease); without one,
  // circuitAllows replaces it after another cool-down.
  const probeEvery = shared ? LEASE_MS : CIRCUIT.coolDownMs;

  // The GCRA law the pacer keeps (docs/rate-limits.md, "The guarantee"; gcra.ts): with emission interval
  // T = 1000 / rate ms, in every closed interval of length L at most `burst + L / T` (rounded down) are admitted.
  // Checked on the attempts' starts: what the endpoint's owner sees is when requests arrive.
  function checkRate(endpoint: number, at: number): void {
    const rate = rates[endpoint];
    const seen = starts[endpoint] as number[];
    seen.push(at);
    if (rate === null || rate === undefined) return;
    for (let i = 0; i < seen.length; i++) {
      const count = seen.length - i;
      const span = at - (seen[i] as number);
      // count ≤ BURST + ⌊span · rate / 1000⌋ (exact: the rates here are whole or quarters).
      if (count > BURST + Math.floor((span * rate) / 1000)) {
        violations.push(`${hosts[endpoint]} (${rate}/s): ${count} attempts started within ${span} ms [${seen}]`);
        return;
      }
    }
  }

  // The circuit laws at an attempt's start: none while open; while half-open, one probe (another only once the first
  // is given up: probeEvery).
  function checkCircuit(endpoint: number, at: number): void {
    const circuit = circuits[endpoint] as CircuitModel;
    const where = `${hosts[endpoint]} at +${at - T0}`;
    if (circuit.status === "open") {
      violations.push(`${where}: sent while the circuit is open (opened at +${circuit.openedAt - T0})`);
    } else if (circuit.status === "half_open") {
      if (circuit.probeAt !== undefined && at < circuit.probeAt + probeEvery) {
        violations.push(`${where}: a second probe while the first (+${circuit.probeAt - T0}) is out`);
      }
      circuit.probeAt = at;
    }
  }

  const dispatch = fake.dispatcher.dispatch.bind(fake.dispatcher);
  fake.dispatcher.dispatch = (request, options) => {
    const key = keyOf(request);
    const host = new URL(request.url).host;
    const endpoint = hosts.indexOf(host);
    const delivery = deliveries.get(key);
    const total = [...out.values()].reduce((a, b) => a + b, 0);
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
    checkCircuit(endpoint, clock.now);
    checkRate(endpoint, clock.now);
    out.set(host, (out.get(host) ?? 0) + 1);
    const sent = dispatch(request, options);
    void sent.then(() => {
      out.set(host, (out.get(host) ?? 1) - 1);
      if (delivery !== undefined) delivery.out = false;
    });
    return sent;
  };

  // The circuit events, checked as they come: half-open only from open once the cool-down passed; open and closed
  // exactly as the model decided from the answers, in that order.
  const announced: CircuitStatus[][] = rates.map(() => []);
  const onEvent = (event: DeliveryWorkerEvent) => {
    if (event.type === "error") violations.push(`error event: ${String(event.error)}`);
    if (event.type !== "circuit") return;
    const endpoint = ids.indexOf(event.endpointId);
    const circuit = circuits[endpoint] as CircuitModel;
    const where = `${hosts[endpoint]} at +${clock.now - T0}`;
    announced[endpoint]?.push(event.status);
    if (event.status === "half_open") {
      if (circuit.status !== "open" || circuit.expected.length > 0) {
        violations.push(`${where}: half_open announced, model ${circuit.status} [${circuit.expected}]`);
      } else if (clock.now < circuit.openedAt + CIRCUIT.coolDownMs) {
        violations.push(`${where}: half_open before the cool-down (opened at +${circuit.openedAt - T0})`);
      }
      circuit.status = "half_open";
      circuit.probeAt = undefined;
      return;
    }
    // A probe the pacer held back, never sent (probeHeldBack): open again until the pacer's next slot (when the next
    // probe goes is the rate law's to check, at the send).
    if (event.status === "open" && circuit.status === "half_open" && circuit.expected.length === 0) {
      if (circuit.probeAt !== undefined) violations.push(`${where}: re-opened after its probe went out, no answer`);
      Object.assign(circuit, { status: "open", openedAt: clock.now - CIRCUIT.coolDownMs, probeAt: undefined });
      return;
    }
    const next = circuit.expected.shift();
    if (next !== event.status) violations.push(`${where}: ${event.status} announced, model expected ${next}`);
  };

  // The model's circuit after one of the endpoint's answers (circuit-breaker.ts `circuitRecord`, restated).
  function record(endpoint: number, failed: boolean): void {
    const circuit = circuits[endpoint] as CircuitModel;
    if (circuit.status === "open") return; // an answer to an attempt sent before it opened
    if (circuit.status === "half_open") {
      // The first answer while half-open decides: a success closes the circuit (its window afresh), a failure re-opens.
      if (failed) Object.assign(circuit, { status: "open", openedAt: clock.now });
      else Object.assign(circuit, { status: "closed", outcomes: [] });
      circuit.expected.push(circuit.status);
      return;
    }
    circuit.outcomes = [...circuit.outcomes, failed].slice(-CIRCUIT.window);
    const failures = circuit.outcomes.filter(Boolean).length;
    const count = circuit.outcomes.length;
    if (count >= CIRCUIT.minimumAttempts && failures / count >= CIRCUIT.failureRatio) {
      Object.assign(circuit, { status: "open", openedAt: clock.now });
      circuit.expected.push("open");
    }
  }

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
    // Without a board each worker's own circuit decides (holdBack's circuitAllows).
    ...(shared ? {} : { sharedCircuits: undefined }),
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
    circuit: CIRCUIT,
    rateLimiter: createEndpointRateLimiter({ burst: BURST }),
    disableAfterMs: Number.POSITIVE_INFINITY,
    leaseMs: LEASE_MS,
    stopGraceMs: 0,
    onEvent,
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
      case "behave":
        behaviours[command.endpoint] = command.behaviour;
        return;
      case "answer": {
        const result = answerOf(behaviours[command.endpoint] as Behaviour);
        if (result === undefined) return;
        for (const pending of [...fake.pending]) {
          const key = keyOf(pending.request);
          const delivery = deliveries.get(key);
          if (delivery?.endpoint !== command.endpoint) continue;
          // Transition as the state machine documents it: 2xx delivered, else retried on the schedule until the last.
          delivery.attempts++;
          const success = result.kind === "response" && result.status < 300;
          if (success) delivery.status = "delivered";
          else if (delivery.attempts >= MAX_ATTEMPTS) delivery.status = "exhausted";
          else {
            delivery.status = "failed";
            delivery.dueAt = clock.now + (DELAYS[delivery.attempts] as number);
          }
          record(command.endpoint, !success);
          pending.answer(result);
        }
        return;
      }
      case "tick":
        clock.now += command.ms;
        worker.wake();
        return;
    }
  }

  async function check(label: string): Promise<void> {
    expect(violations, label).toEqual([]);
    const now = clock.now;
    for (const [i, circuit] of circuits.entries()) {
      expect(circuit.expected, `${label}: ${hosts[i]}'s circuit changes not announced`).toEqual([]);
      // The order of the announcements: open → half_open → closed or open.
      let status: CircuitStatus = "closed";
      for (const next of announced[i] as CircuitStatus[]) {
        const allowed = { closed: ["open"], open: ["half_open"], half_open: ["closed", "open"] }[status];
        expect(allowed, `${label}: ${hosts[i]} announced ${announced[i]}`).toContain(next);
        status = next;
      }
    }
    const states = new Map<string, Awaited<ReturnType<DeliveryQueue["get"]>>>();
    for (const [key, model] of deliveries) {
      const record = await queue.get(model.id);
      states.set(key, record);
      const state = record?.state;
      const where = `${label}: ${key}`;
      expect([state?.status, state?.attempts], where).toEqual([model.status, model.attempts]);
      if (model.status === "delivered" || model.status === "exhausted") continue;
      const due = state?.nextAttemptAt ?? Number.NaN;
      // Due later: exactly when the schedule says (a deferral happens only once due). Due already: perhaps deferred
      // since (rate limit, open circuit), never earlier.
      if (model.dueAt > now) expect(due, where).toBe(model.dueAt);
      else expect(due, where).toBeGreaterThanOrEqual(model.dueAt);
    }
    // No endpoint's open circuit or rate limit delays another's due delivery, and neither holds its own longer than
    // it must: a delivery the queue has due now whose endpoint has nothing out waits only while every slot is taken
    // (else it was sent, or deferred past now: until the cool-down's end, the probe's report or the pacer's next slot).
    const total = [...out.values()].reduce((a, b) => a + b, 0);
    for (const [i, host] of hosts.entries()) {
      const due = [...deliveries.entries()].some(([key, d]) => {
        const state = states.get(key)?.state;
        return d.endpoint === i && !d.out && (state?.nextAttemptAt ?? Number.POSITIVE_INFINITY) <= now;
      });
      if (due && (out.get(host) ?? 0) === 0) {
        expect(total, `${label}: ${host} starved (${[...out.entries()]})`).toBe(CONCURRENCY);
      }
    }
  }

  // Every endpoint answers 2xx from now on; answers and lets the clock run until every delivery is over.
  async function finish(): Promise<void> {
    for (let i = 0; i < behaviours.length; i++) behaviours[i] = "2xx";
    const open = () => [...deliveries.values()].some((d) => d.status === "pending" || d.status === "failed");
    for (let round = 0; round < 500 && open(); round++) {
      const before = fake.sent.length + fake.pending.size;
      for (let i = 0; i < behaviours.length; i++) await run({ type: "answer", endpoint: i });
      await settle();
      if (fake.sent.length + fake.pending.size === before) {
        await run({ type: "tick", ms: 500 });
        await settle();
      }
      await check(`end round ${round}`);
    }
  }

  return { worker, deliveries, settle, run, check, finish, announced, starts };
}

const commands = (endpoints: number) =>
  fc.array(fc.oneof(...circuitCommands(endpoints)), { minLength: 1, maxLength: 50, size: "medium" });
const scenario = fc
  .record({
    // Endpoint 0 at 5/s; the others at 2/s, 0.25/s or none. At 0.25/s the emission interval (4 s) is longer than the
    // cool-down, so the pacer may refuse a half-open circuit's probe.
    rates: fc.array(fc.constantFrom<number | null>(null, null, 2, 0.25), { minLength: 2, maxLength: 3 }),
    shared: fc.boolean(),
  })
  .map(({ rates, shared }): Scenario => ({ rates: [5, ...rates], shared }))
  .chain((s) => fc.tuple(fc.constant(s), commands(s.rates.length)));

describe("delivery worker: circuit breaker and per-endpoint rate limit (model)", () => {
  it("keeps each endpoint's rate and circuit, never delays another endpoint, and ends every delivery (property)", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ([s, steps]) => {
        const w = await world(s);
        w.worker.start();
        await w.settle();
        await w.check("start");
        for (const [n, step] of steps.entries()) {
          await w.run(step);
          await w.settle();
          await w.check(`step ${n} ${JSON.stringify(step)}`);
        }
        await w.finish();
        await w.worker.stop();
        for (const [key, d] of w.deliveries) {
          expect(["delivered", "exhausted"], key).toContain(d.status);
          expect(d.attempts, key).toBeLessThanOrEqual(MAX_ATTEMPTS);
        }
      }),
      { numRuns: 100 },
    );
  });

  // Steps of a scripted run, each checked against the model as in the property.
  async function script(s: Scenario, steps: readonly Command[]) {
    const w = await world(s);
    w.worker.start();
    await w.settle();
    for (const [n, step] of steps.entries()) {
      await w.run(step);
      await w.settle();
      await w.check(`step ${n} ${JSON.stringify(step)}`);
    }
    return w;
  }

  // The permit was taken at admission and spent after the wait for the endpoint's turn: the second delivery, admitted
  // at +0, waited for the first to be answered at +500, then went out with two admitted at +500 (3 at one instant,
  // where burst 2 allows 2).
  it("paces deliveries that waited for their endpoint's turn as of their send, not their admission", async () => {
    const w = await script({ rates: [5, null], shared: true }, [
      { type: "publish", to: 0, count: 1 },
      { type: "publish", to: 0, count: 1 },
      { type: "tick", ms: 500 },
      { type: "publish", to: 0, count: 2 },
      { type: "answer", endpoint: 0 },
      { type: "answer", endpoint: 0 },
    ]);
    expect(w.starts[0]?.map((at) => at - T0)).toEqual([0, 500, 500]);
    // One emission interval (200 ms) later the pacer has room for the last.
    await w.run({ type: "tick", ms: 200 });
    await w.settle();
    await w.check("an interval later");
    expect(w.starts[0]?.map((at) => at - T0)).toEqual([0, 500, 500, 700]);
  });

  // Before: the shared board kept the probe the pacer refused for probeHoldMs (here the 30-day lease), so the circuit
  // of an endpoint paced slower than the cool-down stayed open; an own circuit waited one more cool-down.
  for (const shared of [true, false]) {
    it(`sends a probe the rate limit held back at the pacer's next slot (${shared ? "shared board" : "own circuit"})`, async () => {
      const w = await script({ rates: [5, 0.25], shared }, [
        { type: "behave", endpoint: 1, behaviour: "5xx" },
        { type: "publish", to: 1, count: 4 },
      ]);
      for (let i = 0; i < 40 && !w.announced[1]?.includes("open"); i++) {
        await w.run({ type: "answer", endpoint: 1 });
        await w.settle();
        await w.run({ type: "tick", ms: 500 });
        await w.settle();
        await w.check(`opening, round ${i}`);
      }
      expect(w.announced[1]).toEqual(["open"]);
      await w.run({ type: "behave", endpoint: 1, behaviour: "2xx" });
      // A cool-down (2 s) and an emission interval (4 s): by then a probe went out and closed the circuit.
      for (let ms = 0; ms < 6_000 && !w.announced[1]?.includes("closed"); ms += 100) {
        await w.run({ type: "tick", ms: 100 });
        await w.settle();
        await w.run({ type: "answer", endpoint: 1 });
        await w.settle();
        await w.check(`closing, +${ms} ms`);
      }
      expect(w.announced[1]).toEqual(["open", "half_open", "open", "half_open", "closed"]);
    });
  }

  for (const shared of [true, false]) {
    it(`opens after the failures, waits out the cool-down, then one probe closes it (${shared ? "shared board" : "own circuit"})`, async () => {
      const w = await script({ rates: [5, null], shared }, [
        { type: "behave", endpoint: 1, behaviour: "5xx" },
        { type: "publish", to: 1, count: 6 },
        { type: "answer", endpoint: 1 },
        { type: "answer", endpoint: 1 },
        { type: "answer", endpoint: 1 }, // 3 failures of 3: open
        { type: "publish", to: "all", count: 2 }, // endpoint 0 is served meanwhile
        { type: "answer", endpoint: 0 },
        { type: "tick", ms: CIRCUIT.coolDownMs - 1 },
      ]);
      expect(w.announced[1]).toEqual(["open"]);
      const before = w.starts[1]?.length;
      await w.run({ type: "tick", ms: 1 });
      await w.settle();
      await w.check("cool-down over");
      expect(w.announced[1]).toEqual(["open", "half_open"]);
      expect(w.starts[1]?.length).toBe((before ?? 0) + 1);
      await w.run({ type: "behave", endpoint: 1, behaviour: "2xx" });
      await w.run({ type: "answer", endpoint: 1 });
      await w.settle();
      await w.check("probe answered");
      expect(w.announced[1]).toEqual(["open", "half_open", "closed"]);
      await w.finish();
      expect([...w.deliveries.values()].map((d) => d.status)).not.toContain("pending");
    });
  }
});
