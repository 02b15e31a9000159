import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createEndpointRateLimiter } from "../../../../src/ratelimit/endpoint-limiter";
import type { DeliveryWorkerEvent } from "../../../../src/webhooks/delivery/node/index";
import { LEASE_MS, modelWorld, T0 } from "./worker-model-harness";
import { answerUntilOver, dueAndWaiting, expectAsModelled, runSteps } from "./worker-model-steps";
import {
  type AnswerCommand,
  answerOf,
  type BehaveCommand,
  type Behaviour,
  BURST,
  CIRCUIT,
  circuitCommands,
  DELAYS,
  isOver,
  MAX_ATTEMPTS,
  type PublishCommand,
  rateBreach,
  recordAnswer,
  type TickCommand,
} from "./worker-model-support";

// A model test of the delivery worker's circuit breaker and per-endpoint rate limit: random commands (publish, set an
// endpoint's behaviour, answer, tick the fake clock) against the worker on the memory queue, each step checked against
// a plain model written here. As in worker-model.test.ts nothing waits for wall-clock time: the test waits until the
// worker has done all it can (settle), then checks.

const CONCURRENCY = 4;
const ENDPOINT_CONCURRENCY = 2;

type CircuitStatus = "closed" | "open" | "half_open";

type Command = PublishCommand | BehaveCommand | AnswerCommand | TickCommand;

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

interface Scenario {
  /** Each endpoint's `rateLimit` (deliveries per second), `null` for none; endpoint 0 always has one. */
  readonly rates: readonly (number | null)[];
  /** Whether the queue shares its circuit board (the memory queue does); else each worker's own circuit decides. */
  readonly shared: boolean;
}

// The worker, its world, and the model, checked at every dispatch and circuit event and after every command.
async function world({ rates, shared }: Scenario) {
  const m = await modelWorld(rates);
  const { clock, deliveries, hosts, ids, violations } = m;
  const behaviours: Behaviour[] = rates.map(() => "2xx");
  const circuits: CircuitModel[] = rates.map(() => ({
    status: "closed",
    outcomes: [],
    openedAt: 0,
    probeAt: undefined,
    expected: [],
  }));
  // Every attempt's start on the fake clock, per endpoint, in order.
  const starts: number[][] = rates.map(() => []);
  // With a shared board a probe won and never reported is another's after probeHoldMs (here the lease); without one,
  // circuitAllows replaces it after another cool-down.
  const probeEvery = shared ? LEASE_MS : CIRCUIT.coolDownMs;

  // The rate law (rateBreach) at an attempt's start.
  function checkRate(endpoint: number, at: number): void {
    const seen = starts[endpoint] as number[];
    seen.push(at);
    const breach = rateBreach(seen, rates[endpoint], BURST);
    if (breach !== undefined) violations.push(`${hosts[endpoint]} ${breach}`);
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

  const sends = m.watch(
    0,
    { concurrency: CONCURRENCY, endpointConcurrency: ENDPOINT_CONCURRENCY },
    {
      sent: (_, endpoint) => {
        checkCircuit(endpoint, clock.now);
        checkRate(endpoint, clock.now);
      },
    },
  );

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

  const worker = m.worker({
    // Without a board each worker's own circuit decides (holdBack's circuitAllows).
    queue: m.countedQueue(shared ? {} : { sharedCircuits: undefined }),
    dispatcher: sends.fake.dispatcher,
    concurrency: CONCURRENCY,
    endpointConcurrency: ENDPOINT_CONCURRENCY,
    delays: DELAYS,
    circuit: CIRCUIT,
    rateLimiter: createEndpointRateLimiter({ burst: BURST }),
    onEvent,
  });
  const settle = () => m.settle([sends.fake], [worker]);

  async function run(command: Command): Promise<void> {
    switch (command.type) {
      case "publish":
        return m.publish(command.to, command.count);
      case "behave":
        behaviours[command.endpoint] = command.behaviour;
        return;
      case "answer": {
        const result = answerOf(behaviours[command.endpoint] as Behaviour);
        if (result === undefined) return;
        for (const pending of [...sends.fake.pending]) {
          const delivery = deliveries.get(m.keyOf(pending.request));
          if (delivery?.endpoint !== command.endpoint) continue;
          const success = recordAnswer(delivery, result, clock.now, DELAYS);
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
    // Due already: perhaps deferred since (rate limit, open circuit), never earlier.
    const stored = await expectAsModelled(m, label, { deferrable: true });
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
    // No endpoint's open circuit or rate limit delays another's due delivery, and neither holds its own longer than
    // it must: a delivery the queue has due now whose endpoint has nothing out waits only while every slot is taken
    // (else it was sent, or deferred past now: until the cool-down's end, the probe's report or the pacer's next slot).
    for (const [i, host] of hosts.entries()) {
      if (dueAndWaiting(m, stored, i).length > 0 && (sends.out.get(i) ?? 0) === 0) {
        expect(sends.total(), `${label}: ${host} starved (${[...sends.out.entries()]})`).toBe(CONCURRENCY);
      }
    }
  }

  // Every endpoint answers 2xx from now on; answers and lets the clock run until every delivery is over.
  async function finish(): Promise<void> {
    for (let i = 0; i < behaviours.length; i++) behaviours[i] = "2xx";
    const open = () => [...deliveries.values()].some((d) => !isOver(d));
    await answerUntilOver(
      { run, settle, check },
      { endpoints: behaviours.length, fakes: [sends.fake], open, tickMs: 500 },
    );
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
        await runSteps(w, steps);
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
    await runSteps(w, steps);
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
