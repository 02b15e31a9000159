import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { createEndpointRateLimiter } from "../../../../src/ratelimit/endpoint-limiter";
import { createMemoryStore } from "../../../../src/ratelimit/memory/memory-store";
import type { AttemptResult } from "../../../../src/webhooks/delivery/attempt";
import type { CircuitBoard } from "../../../../src/webhooks/delivery/circuit-board";
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

// A model test of two delivery workers on one memory queue: they share its circuit board (sharedCircuits()) and, as
// workers of one PostgreSQL queue share its rate_limits table, one rate-limit store. Random commands (publish, set an
// endpoint's behaviour, answer whichever worker sent, tick the fake clock, stop one worker) and, after every step,
// laws over both workers together. As in worker-circuit-model.test.ts nothing waits for wall-clock time: the test
// waits until neither worker moves (settle), then checks.

const T0 = 1_700_000_000_000;
const CONCURRENCY = 3;
const ENDPOINT_CONCURRENCY = 2;
// Delays before each attempt (no jitter).
const DELAYS = [0, 500, 1_000, 2_000] as const;
const MAX_ATTEMPTS = DELAYS.length;
// Longer than every run's fake clock moves (worker-model.test.ts: the heartbeat runs on real time), so a stopped
// worker's claims come back through its stop's hand-back, never a lease's end. It is the probe hold too.
const LEASE_MS = 30 * 86_400_000;
const CIRCUIT = { window: 4, minimumAttempts: 3, failureRatio: 0.6, coolDownMs: 2_000 } as const;
const BURST = 2;
const WORKERS = [0, 1] as const;

type Command =
  | { readonly type: "publish"; readonly to: number | "all"; readonly count: number }
  | { readonly type: "behave"; readonly endpoint: number; readonly behaviour: Behaviour }
  | { readonly type: "answer"; readonly endpoint: number }
  | { readonly type: "tick"; readonly ms: number }
  | { readonly type: "stop"; readonly worker: number };

// What the model knows of one delivery.
interface Modelled {
  readonly id: string;
  readonly endpoint: number;
  status: DeliveryStatus;
  attempts: number;
  /** When it is due by the retry schedule (a deferral may put it later, never earlier). */
  dueAt: number;
  /** The worker an attempt of it is out at, if any. */
  out: number | undefined;
}

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

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** The answer an endpoint of `behaviour` gives; `undefined`: none (it hangs). */
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

// The two workers, their world, and the model, checked at every dispatch and board write and after every command.
async function world(rates: readonly (number | null)[]) {
  const clock = { now: T0 };
  const behaviours: Behaviour[] = rates.map(() => "2xx");
  const endpoints = createMemoryEndpointStore();
  const queue: DeliveryQueue = createMemoryDeliveryQueue({ endpoints, now: () => clock.now });
  const board = queue.sharedCircuits?.() as CircuitBoard;
  const rateStore = createMemoryStore();
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
  const boards: BoardModel[] = rates.map(() => ({ openUntil: undefined, writtenAt: 0, wins: [], sends: 0 }));
  // Per worker and endpoint: "armed" once the worker won the probe (its next answer of the endpoint decides), then
  // the board write that answer must make, until made.
  const decide: (undefined | "armed" | "open" | "closed")[][] = WORKERS.map(() => rates.map(() => undefined));
  // Every attempt's start on the fake clock, per endpoint, both workers together, in order.
  const starts: number[][] = rates.map(() => []);
  const violations: string[] = [];
  const out = WORKERS.map(() => new Map<number, number>()); // attempts out per worker, per endpoint
  const stopped = WORKERS.map(() => false);
  const stops: Promise<void>[] = [];
  const keyOf = (request: DeliveryRequest) => `${new URL(request.url).host} ${request.headers["webhook-id"]}`;
  const at = () => `+${clock.now - T0}`;

  // The GCRA law (docs/rate-limits.md, "The guarantee"), over both workers' attempts: with T = 1000 / rate ms, in
  // every closed interval of length L at most `burst + ⌊L / T⌋` start.
  function checkRate(endpoint: number): void {
    const rate = rates[endpoint];
    const seen = starts[endpoint] as number[];
    seen.push(clock.now);
    if (rate === null || rate === undefined) return;
    for (let i = 0; i < seen.length; i++) {
      const count = seen.length - i;
      const span = clock.now - (seen[i] as number);
      if (count > BURST + Math.floor((span * rate) / 1000)) {
        violations.push(`${hosts[endpoint]} (${rate}/s): ${count} attempts started within ${span} ms [${seen}]`);
        return;
      }
    }
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

  const fakes = WORKERS.map(() => fakeDispatcher(() => true)); // every request waits for the test to answer it
  for (const w of WORKERS) {
    const fake = fakes[w] as ReturnType<typeof fakeDispatcher>;
    const counts = out[w] as Map<number, number>;
    const dispatch = fake.dispatcher.dispatch.bind(fake.dispatcher);
    fake.dispatcher.dispatch = (request, options) => {
      const key = keyOf(request);
      const endpoint = hosts.indexOf(new URL(request.url).host);
      const delivery = deliveries.get(key);
      const total = [...counts.values()].reduce((a, b) => a + b, 0);
      if (stopped[w]) violations.push(`worker ${w} sent ${key} after its stop()`);
      if (total + 1 > CONCURRENCY) violations.push(`worker ${w}: ${total + 1} attempts out at once`);
      if ((counts.get(endpoint) ?? 0) + 1 > ENDPOINT_CONCURRENCY) violations.push(`worker ${w}: ${key} over its cap`);
      if (delivery === undefined) violations.push(`sent ${key}, never published`);
      else {
        if (delivery.out !== undefined) violations.push(`worker ${w} sent ${key}, out at worker ${delivery.out}`);
        if (delivery.status === "delivered" || delivery.status === "exhausted") {
          violations.push(`sent ${key}, ${delivery.status}`);
        }
        if (delivery.dueAt > clock.now) violations.push(`sent ${key} at ${at()}, due at +${delivery.dueAt - T0}`);
        delivery.out = w;
      }
      checkCircuit(endpoint, w);
      checkRate(endpoint);
      counts.set(endpoint, (counts.get(endpoint) ?? 0) + 1);
      const sent = dispatch(request, options);
      void sent.then(() => {
        counts.set(endpoint, (counts.get(endpoint) ?? 1) - 1);
        if (delivery !== undefined) delivery.out = undefined;
      });
      return sent;
    };
  }

  const onEvent = (event: DeliveryWorkerEvent) => {
    if (event.type === "error") violations.push(`error event: ${String(event.error)}`);
  };

  // Every step either worker takes on the queue, counted: they are quiet when nothing moves.
  let moves = 0;
  // Which worker holds each claimed delivery (until its outcome or hand-back is stored).
  const holder = new Map<string, number>();
  const workers: DeliveryWorker[] = WORKERS.map((w) => {
    const shared = boardOf(w);
    const seen: DeliveryQueue = Object.assign(Object.create(queue) as DeliveryQueue, {
      claim: async (...args: Parameters<DeliveryQueue["claim"]>) => {
        moves++;
        if (stopped[w]) violations.push(`worker ${w} claimed after its stop()`);
        const claimed = await queue.claim(...args);
        for (const c of claimed) holder.set(c.id, w);
        return claimed;
      },
      complete: async (...args: Parameters<DeliveryQueue["complete"]>) => {
        moves++;
        const stored = await queue.complete(...args);
        if (stored && holder.get(args[0].id) === w) holder.delete(args[0].id);
        return stored;
      },
      sharedCircuits: () => shared,
    });
    const worker = createDeliveryWorker({
      queue: seen,
      endpoints,
      dispatcher: (fakes[w] as ReturnType<typeof fakeDispatcher>).dispatcher,
      now: () => clock.now,
      random: () => 0.5,
      concurrency: CONCURRENCY,
      endpointConcurrency: ENDPOINT_CONCURRENCY,
      retry: scheduleBackoff([...DELAYS], 0),
      circuit: CIRCUIT,
      // One store for both, as the queue's sharedRateLimits() gives them (burst 2 here, where the default is 1).
      rateLimiter: createEndpointRateLimiter({ burst: BURST, store: rateStore }),
      // Each admission reads the shared board: "other workers learn of it within endpointCacheMs".
      endpointCacheMs: 0,
      disableAfterMs: Number.POSITIVE_INFINITY,
      leaseMs: LEASE_MS,
      stopGraceMs: 0,
      onEvent,
    });
    cleanups.push(() => worker.stop());
    return worker;
  });

  // Until nothing has moved for a few turns of the event loop (a stop() under way waits for its hand-backs).
  const settle = async () => {
    const print = () =>
      `${fakes.map((f) => `${f.sent.length} ${f.pending.size}`)} ${workers.map((w) => w.inFlight)} ${moves}`;
    await Promise.all(stops);
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
            out: undefined,
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
        for (const w of WORKERS) {
          for (const pending of [...(fakes[w] as ReturnType<typeof fakeDispatcher>).pending]) {
            const delivery = deliveries.get(keyOf(pending.request));
            if (delivery?.endpoint !== command.endpoint) continue;
            delivery.attempts++;
            const success = result.kind === "response" && result.status < 300;
            if (success) delivery.status = "delivered";
            else if (delivery.attempts >= MAX_ATTEMPTS) delivery.status = "exhausted";
            else {
              delivery.status = "failed";
              delivery.dueAt = clock.now + (DELAYS[delivery.attempts] as number);
            }
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
    expect(violations, label).toEqual([]);
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
    const now = clock.now;
    const states = new Map<string, Awaited<ReturnType<DeliveryQueue["get"]>>>();
    for (const [key, model] of deliveries) {
      const record = await queue.get(model.id);
      states.set(key, record);
      const state = record?.state;
      const where = `${label}: ${key}`;
      expect([state?.status, state?.attempts], where).toEqual([model.status, model.attempts]);
      if (model.status === "delivered" || model.status === "exhausted") continue;
      const due = state?.nextAttemptAt ?? Number.NaN;
      if (model.dueAt > now) expect(due, where).toBe(model.dueAt);
      else expect(due, where).toBeGreaterThanOrEqual(model.dueAt);
    }
    // No endpoint's circuit or rate delays another's due deliveries, and a stopped worker's went back to the queue
    // for the other: a delivery due now whose endpoint has nothing out waits only while the worker holding its claim
    // (waiting for a slot) has every slot taken, or, unclaimed, while every running worker has.
    const busy = (w: number) =>
      [...(out[w] as Map<number, number>).values()].reduce((a, b) => a + b, 0) === CONCURRENCY;
    const running = WORKERS.filter((w) => !stopped[w]);
    for (const i of hosts.keys()) {
      if (WORKERS.some((w) => (out[w]?.get(i) ?? 0) > 0)) continue;
      const waiting = [...deliveries.entries()].filter(([key, d]) => {
        const state = states.get(key)?.state;
        return d.endpoint === i && d.out === undefined && (state?.nextAttemptAt ?? Number.POSITIVE_INFINITY) <= now;
      });
      for (const [key, d] of waiting) {
        const w = holder.get(d.id);
        const held = w === undefined ? running.every(busy) : busy(w);
        expect(held, `${label}: ${key} starved (claimed by worker ${w ?? "none"})`).toBe(true);
      }
    }
  }

  // Every endpoint answers 2xx from now on; answers and lets the clock run until every delivery is over.
  async function finish(): Promise<void> {
    for (let i = 0; i < behaviours.length; i++) behaviours[i] = "2xx";
    const open = () => [...deliveries.values()].some((d) => d.status === "pending" || d.status === "failed");
    const sent = () => fakes.reduce((n, f) => n + f.sent.length + f.pending.size, 0);
    for (let round = 0; round < 500 && open(); round++) {
      const before = sent();
      for (let i = 0; i < behaviours.length; i++) await run({ type: "answer", endpoint: i });
      await settle();
      if (sent() === before) {
        await run({ type: "tick", ms: 500 });
        await settle();
      }
      await check(`end round ${round}`);
    }
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
        for (const [n, step] of steps.entries()) {
          await w.run(step);
          await w.settle();
          await w.check(`step ${n} ${JSON.stringify(step)}`);
        }
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
    for (const [n, step] of steps.entries()) {
      await w.run(step);
      await w.settle();
      await w.check(`step ${n} ${JSON.stringify(step)}`);
    }
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
