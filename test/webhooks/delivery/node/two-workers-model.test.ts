import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createEndpointRateLimiter } from "../../../../src/ratelimit/endpoint-limiter";
import { createMemoryStore } from "../../../../src/ratelimit/memory/memory-store";
import type { CircuitBoard } from "../../../../src/webhooks/delivery/circuit-board";
import type { DeliveryQueue } from "../../../../src/webhooks/delivery/delivery-queue";
import type { DeliveryWorker, DeliveryWorkerEvent } from "../../../../src/webhooks/delivery/node/index";
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

// A model test of two delivery workers on one memory queue: they share its circuit board (sharedCircuits()) and, as
// workers of one PostgreSQL queue share its rate_limits table, one rate-limit store. Random commands (publish, set an
// endpoint's behaviour, answer whichever worker sent, tick the fake clock, stop one worker) and, after every step,
// laws over both workers together. As in worker-circuit-model.test.ts nothing waits for wall-clock time: the test
// waits until neither worker moves (settle), then checks.

const CONCURRENCY = 3;
const ENDPOINT_CONCURRENCY = 2;
const WORKERS = [0, 1] as const;
// The harness's LEASE_MS (longer than every run's fake clock moves) is the probe hold too; a stopped worker's claims
// come back through its stop's hand-back, never a lease's end.

type Command =
  | PublishCommand
  | BehaveCommand
  | AnswerCommand
  | TickCommand
  | { readonly type: "stop"; readonly worker: number };

// The shared board's state of one endpoint, as written by the workers (observed through each worker's wrapper).
interface BoardModel {
  /** `undefined`: closed. */
  openUntil: number | undefined;
  /** When it was last opened. */
  writtenAt: number;
  /** When each probe since was won, by which worker, and its hold's end (its name on the board). */
  wins: { at: number; worker: number; until: number }[];
  /** Attempts sent past `openUntil` while it stayed open (each must be a probe won). */
  sends: number;
}

// The two workers, their world, and the model, checked at every dispatch and board write and after every command.
async function world(rates: readonly (number | null)[]) {
  const m = await modelWorld(rates);
  const { clock, deliveries, hosts, ids, queue, violations } = m;
  const behaviours: Behaviour[] = rates.map(() => "2xx");
  const board = queue.sharedCircuits?.() as CircuitBoard;
  const rateStore = createMemoryStore();
  const boards: BoardModel[] = rates.map(() => ({ openUntil: undefined, writtenAt: 0, wins: [], sends: 0 }));
  // Per worker and endpoint: "armed" once the worker won the probe (its next answer of the endpoint decides), then
  // the board write that answer must make, until made.
  const decide: (undefined | "armed" | "open" | "closed")[][] = WORKERS.map(() => rates.map(() => undefined));
  // Every attempt's start on the fake clock, per endpoint, both workers together, in order.
  const starts: number[][] = rates.map(() => []);
  const stopped = WORKERS.map(() => false);
  const stops: Promise<void>[] = [];
  const at = () => `+${clock.now - T0}`;

  // The rate law (rateBreach), over both workers' attempts.
  function checkRate(endpoint: number): void {
    const seen = starts[endpoint] as number[];
    seen.push(clock.now);
    const breach = rateBreach(seen, rates[endpoint], BURST);
    if (breach !== undefined) violations.push(`${hosts[endpoint]} ${breach}`);
  }

  // The shared circuit at an attempt's start: nothing while open (a worker learns of it within endpointCacheMs, here
  // 0: so only at the instant it was opened); past the cool-down only the probes won, one per probe hold.
  function checkCircuit(endpoint: number, worker: number): void {
    const b = boards[endpoint] as BoardModel;
    if (b.openUntil === undefined) return;
    const where = `${hosts[endpoint]} at ${at()} by worker ${worker}`;
    if (clock.now < b.openUntil) {
      if (b.writtenAt < clock.now) {
        violations.push(`${where}: sent while the shared circuit is open (opened at +${b.writtenAt - T0})`);
      }
      return;
    }
    b.sends++;
    if (b.sends > b.wins.length) {
      violations.push(`${where}: sent while half-open, ${b.sends} sends for ${b.wins.length} probes won`);
    }
  }

  // One worker's view of the board: the same board, each write checked and recorded.
  function boardOf(worker: number): CircuitBoard {
    const endpointOf = (id: string) => ids.indexOf(id);
    return {
      openUntil: (id) => board.openUntil(id),
      async open(id, until) {
        const k = endpointOf(id);
        const expected = decide[worker]?.[k];
        if (expected === "closed")
          violations.push(`${hosts[k]} at ${at()}: worker ${worker}'s probe succeeded, opened`);
        (decide[worker] as unknown[])[k] = undefined;
        boards[k] = { openUntil: until, writtenAt: clock.now, wins: [], sends: 0 };
        return board.open(id, until);
      },
      async close(id) {
        const k = endpointOf(id);
        const expected = decide[worker]?.[k];
        if (expected !== "closed") {
          violations.push(`${hosts[k]} at ${at()}: worker ${worker} closed the circuit, expected ${expected}`);
        }
        (decide[worker] as unknown[])[k] = undefined;
        boards[k] = { openUntil: undefined, writtenAt: clock.now, wins: [], sends: 0 };
        return board.close(id);
      },
      async takeProbe(id, now, probeUntil) {
        const won = await board.takeProbe(id, now, probeUntil);
        if (!won) return false;
        const k = endpointOf(id);
        const b = boards[k] as BoardModel;
        const last = b.wins.at(-1);
        if (last !== undefined && now < last.at + LEASE_MS) {
          violations.push(`${hosts[k]} at ${at()}: a second probe (worker ${worker}) within the hold`);
        }
        b.wins.push({ at: now, worker, until: probeUntil });
        (decide[worker] as unknown[])[k] = "armed";
        return true;
      },
      // A probe that never went out: given back only while it is the worker's (the last won, nothing written since).
      async releaseProbe(id, probeUntil, until) {
        const k = endpointOf(id);
        const last = (boards[k] as BoardModel).wins.at(-1);
        const ours = last !== undefined && last.worker === worker && last.until === probeUntil;
        const released = await board.releaseProbe(id, probeUntil, until);
        if (released !== ours) {
          violations.push(`${hosts[k]} at ${at()}: worker ${worker}'s probe release answered ${released}, not ${ours}`);
        }
        (decide[worker] as unknown[])[k] = undefined;
        if (released) boards[k] = { openUntil: until, writtenAt: clock.now, wins: [], sends: 0 };
        return released;
      },
    };
  }

  const sends = WORKERS.map((w) =>
    m.watch(
      w,
      { concurrency: CONCURRENCY, endpointConcurrency: ENDPOINT_CONCURRENCY },
      {
        stopped: () => stopped[w] === true,
        sent: (_, endpoint) => {
          checkCircuit(endpoint, w);
          checkRate(endpoint);
        },
      },
    ),
  );
  const fakes = sends.map((s) => s.fake);

  const onEvent = (event: DeliveryWorkerEvent) => {
    if (event.type === "error") violations.push(`error event: ${String(event.error)}`);
  };

  // Which worker holds each claimed delivery (until its outcome or hand-back is stored).
  const holder = new Map<string, number>();
  const workers: DeliveryWorker[] = sends.map(({ fake }, w) => {
    const shared = boardOf(w);
    return m.worker({
      queue: m.countedQueue({
        claim: async (...args: Parameters<DeliveryQueue["claim"]>) => {
          if (stopped[w]) violations.push(`worker ${w} claimed after its stop()`);
          const claimed = await queue.claim(...args);
          for (const c of claimed) holder.set(c.id, w);
          return claimed;
        },
        complete: async (...args: Parameters<DeliveryQueue["complete"]>) => {
          const stored = await queue.complete(...args);
          if (stored && holder.get(args[0].id) === w) holder.delete(args[0].id);
          return stored;
        },
        sharedCircuits: () => shared,
      }),
      dispatcher: fake.dispatcher,
      concurrency: CONCURRENCY,
      endpointConcurrency: ENDPOINT_CONCURRENCY,
      delays: DELAYS,
      circuit: CIRCUIT,
      // One store for both, as the queue's sharedRateLimits() gives them (burst 2 here, where the default is 1).
      rateLimiter: createEndpointRateLimiter({ burst: BURST, store: rateStore }),
      // Each admission reads the shared board: "other workers learn of it within endpointCacheMs".
      endpointCacheMs: 0,
      onEvent,
    });
  });

  // Until nothing has moved for a few turns of the event loop (a stop() under way waits for its hand-backs).
  const settle = async () => {
    await Promise.all(stops);
    await m.settle(fakes, workers);
  };

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
        for (const [w, { fake }] of sends.entries()) {
          for (const pending of [...fake.pending]) {
            const delivery = deliveries.get(m.keyOf(pending.request));
            if (delivery?.endpoint !== command.endpoint) continue;
            const success = recordAnswer(delivery, result, clock.now, DELAYS);
            // The first answer the probe's worker hears after winning it decides, for both (circuit-breaker.ts).
            if (decide[w]?.[command.endpoint] === "armed") {
              (decide[w] as unknown[])[command.endpoint] = success ? "closed" : "open";
            }
            pending.answer(result);
          }
        }
        return;
      }
      case "tick":
        clock.now += command.ms;
        for (const w of WORKERS) if (!stopped[w]) workers[w]?.wake();
        return;
      case "stop": {
        // One worker stays: the other's deliveries go back to the queue, for it.
        const other = WORKERS.find((w) => w !== command.worker) as number;
        if (stopped[command.worker] || stopped[other]) return;
        stopped[command.worker] = true;
        // No wake: the memory queue tells its subscribers of a delivery handed back due at once, so the other worker
        // claims what this one hands back.
        stops.push((workers[command.worker] as DeliveryWorker).stop());
        return;
      }
    }
  }

  async function check(label: string): Promise<void> {
    // Due already: perhaps deferred since (rate limit, shared circuit), never earlier.
    const stored = await expectAsModelled(m, label, { deferrable: true });
    for (const w of WORKERS) {
      // A decided probe's write is made once its outcome is stored.
      for (const [k, d] of (decide[w] as unknown[]).entries()) {
        expect(d === undefined || d === "armed", `${label}: worker ${w}'s probe of ${hosts[k]} decided ${d}`).toBe(
          true,
        );
      }
      if (stopped[w]) {
        expect(workers[w]?.inFlight, `${label}: worker ${w} stopped, holding`).toBe(0);
        expect(fakes[w]?.pending.size, `${label}: worker ${w} stopped, attempts out`).toBe(0);
      }
    }
    // No endpoint's circuit or rate delays another's due deliveries, and a stopped worker's went back to the queue
    // for the other: a delivery due now whose endpoint has nothing out waits only while the worker holding its claim
    // (waiting for a slot) has every slot taken, or, unclaimed, while every running worker has.
    const busy = (w: number) => sends[w]?.total() === CONCURRENCY;
    const running = WORKERS.filter((w) => !stopped[w]);
    for (const i of hosts.keys()) {
      if (sends.some((s) => (s.out.get(i) ?? 0) > 0)) continue;
      for (const [key, d] of dueAndWaiting(m, stored, i)) {
        const w = holder.get(d.id);
        const held = w === undefined ? running.every(busy) : busy(w);
        expect(held, `${label}: ${key} starved (claimed by worker ${w ?? "none"})`).toBe(true);
      }
    }
  }

  // Every endpoint answers 2xx from now on; answers and lets the clock run until every delivery is over.
  async function finish(): Promise<void> {
    for (let i = 0; i < behaviours.length; i++) behaviours[i] = "2xx";
    const open = () => [...deliveries.values()].some((d) => !isOver(d));
    await answerUntilOver({ run, settle, check }, { endpoints: behaviours.length, fakes, open, tickMs: 500 });
  }

  return { workers, deliveries, settle, run, check, finish, starts, stopped };
}

const commands = (endpoints: number) =>
  fc.array(
    fc.oneof(...circuitCommands(endpoints), {
      weight: 1,
      arbitrary: fc.record({ type: fc.constant("stop" as const), worker: fc.nat(1) }),
    }),
    { minLength: 1, maxLength: 50, size: "medium" },
  );
// Endpoint 0 at 5/s; the others at 2/s, 0.25/s (an emission interval longer than the cool-down) or none.
const scenario = fc
  .array(fc.constantFrom<number | null>(null, null, 2, 0.25), { minLength: 1, maxLength: 2 })
  .map((rates) => [5, ...rates])
  .chain((rates) => fc.tuple(fc.constant(rates), commands(rates.length)));

describe("two delivery workers on one queue (model)", () => {
  it("share each endpoint's rate and circuit, keep their own caps, and hand a stopped worker's deliveries on (property)", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ([rates, steps]) => {
        const w = await world(rates);
        for (const worker of w.workers) worker.start();
        await w.settle();
        await w.check("start");
        await runSteps(w, steps);
        await w.finish();
        for (const worker of w.workers) await worker.stop();
        for (const [key, d] of w.deliveries) {
          expect(["delivered", "exhausted"], key).toContain(d.status);
          expect(d.attempts, key).toBeLessThanOrEqual(MAX_ATTEMPTS);
        }
      }),
      { numRuns: 200 },
    );
  }, 50_000); // About 10 s alone; a CI run may share the CPU.

  // Steps of a scripted run, each checked as in the property, then the end: every delivery over.
  async function script(rates: readonly (number | null)[], steps: readonly Command[]) {
    const w = await world(rates);
    for (const worker of w.workers) worker.start();
    await w.settle();
    await runSteps(w, steps);
    await w.finish();
    for (const [key, d] of w.deliveries) expect(["delivered", "exhausted"], key).toContain(d.status);
    return w;
  }

  // Before: worker 0's window opened e1's circuit, it won the probe after the cool-down and sent it, and stop()
  // aborted it; the board kept that probe for the probe hold (the lease: 30 days here, 60 s by default), so worker 1
  // could not probe e1 and its deliveries waited that long.
  it("releases the probe a stopped worker won: the other probes at once", async () => {
    const w = await script(
      [5, null],
      [
        { type: "publish", to: 1, count: 1 },
        { type: "answer", endpoint: 1 },
        { type: "publish", to: 1, count: 2 },
        { type: "behave", endpoint: 1, behaviour: "5xx" },
        { type: "answer", endpoint: 1 }, // worker 0's window: 1 success, 2 failures: open until +2000
        { type: "tick", ms: 2_000 }, // worker 0 wins the probe and sends it
        { type: "stop", worker: 0 }, // aborted: no outcome
      ],
    );
    expect(w.stopped).toEqual([true, false]);
    // The next probe, worker 1's, went out at +2000, the instant worker 0 handed its one back.
    expect(w.starts[1]?.map((at) => at - T0)).toContain(2_000);
    expect(w.starts[1]?.filter((at) => at - T0 === 2_000).length).toBe(2);
  });

  // Before: worker 1 admitted an e0 delivery (the circuit closed), which waited for e0's turn; meanwhile worker 0's
  // window opened the shared circuit; when the turn came, at +1200, worker 1 sent it, the circuit open since +700:
  // the circuit was looked at on admission only, not at the send.
  it("sends nothing a worker admitted before another opened the shared circuit", async () => {
    await script(
      [5, null, null],
      [
        { type: "publish", to: "all", count: 5 },
        { type: "tick", ms: 200 },
        { type: "publish", to: "all", count: 1 },
        { type: "publish", to: 0, count: 2 },
        { type: "answer", endpoint: 0 },
        { type: "tick", ms: 500 },
        { type: "publish", to: "all", count: 3 },
        { type: "answer", endpoint: 1 },
        { type: "behave", endpoint: 0, behaviour: "5xx" },
        { type: "answer", endpoint: 0 },
        { type: "tick", ms: 500 },
        { type: "stop", worker: 0 },
      ],
    );
  });
});
