import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AttemptResult } from "../../../../src/webhooks/delivery/attempt";
import type { DeliveryRequest } from "../../../../src/webhooks/delivery/delivery-request";
import {
  type AttemptVerdict,
  type ClaimRequest,
  DeliveryScheduler,
  type SchedulerConfig,
} from "../../../../src/webhooks/delivery/delivery-scheduler";
import { modelWorld } from "./worker-model-harness";
import { answerUntilOver, expectAsModelled, runSteps } from "./worker-model-steps";
import {
  type AnswerCommand,
  answerOf as answerOfSteady,
  isOver,
  type PublishCommand,
  recordAnswer,
  type Behaviour as SteadyBehaviour,
  type TickCommand,
} from "./worker-model-support";

// A model test of the delivery worker (issue 15): random commands against the worker on the memory queue, a fake clock
// and the fake dispatcher, each step checked against a plain model of what every delivery's state must be. Nothing
// waits for wall-clock time: the test waits until the worker has done all it can (settle), then checks.

const CONCURRENCY = 4;
const ENDPOINT_CONCURRENCY = 2;
// Delays before each attempt (no jitter): attempts 2 and 3 wait 1 s and 3 s after the failure before them.
const DELAYS = [0, 1_000, 3_000] as const;
const MAX_ATTEMPTS = DELAYS.length;
// A slow endpoint answers 2xx once a request has been out this long (fake clock).
const SLOW_MS = 500;

// Each endpoint's behaviour is fixed for the run; a slow one answers only once its request has been out SLOW_MS.
type Behaviour = SteadyBehaviour | "slow";

type Command = PublishCommand | AnswerCommand | TickCommand | { readonly type: "stop" };

/** The answer an endpoint of `behaviour` gives to a request sent at `sentAt`, at `now`; `undefined`: none yet. */
function answerOf(behaviour: Behaviour, sentAt: number, now: number): AttemptResult | undefined {
  if (behaviour !== "slow") return answerOfSteady(behaviour);
  return now - sentAt >= SLOW_MS ? { kind: "response", status: 200, durationMs: now - sentAt } : undefined;
}

// The worker, its world, and the model, checked at every dispatch and after every command.
async function world(behaviours: readonly Behaviour[]) {
  const m = await modelWorld(behaviours.map(() => null));
  const { clock, deliveries, hosts } = m;
  const sentAt = new Map<DeliveryRequest, number>();
  let stopped = false;
  const sends = m.watch(
    0,
    { concurrency: CONCURRENCY, endpointConcurrency: ENDPOINT_CONCURRENCY },
    {
      stopped: () => stopped,
      sent: (request) => sentAt.set(request, clock.now),
      over: (request) => sentAt.delete(request),
    },
  );
  const worker = m.worker({
    queue: m.countedQueue(),
    dispatcher: sends.fake.dispatcher,
    concurrency: CONCURRENCY,
    endpointConcurrency: ENDPOINT_CONCURRENCY,
    delays: DELAYS,
    circuit: false,
  });
  const settle = () => m.settle([sends.fake], [worker]);

  async function run(command: Command): Promise<void> {
    switch (command.type) {
      case "publish":
        return m.publish(command.to, command.count);
      case "answer": {
        const behaviour = behaviours[command.endpoint] as Behaviour;
        for (const pending of [...sends.fake.pending]) {
          const delivery = deliveries.get(m.keyOf(pending.request));
          if (delivery?.endpoint !== command.endpoint) continue;
          const result = answerOf(behaviour, sentAt.get(pending.request) ?? clock.now, clock.now);
          if (result === undefined) continue;
          recordAnswer(delivery, result, clock.now, DELAYS);
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
    // Due now: perhaps handed back since (stop(), a full endpoint), but never put off past now.
    await expectAsModelled(m, label, { deferrable: false, about: (d) => `${behaviours[d.endpoint]}` });
    // No starvation: an endpoint with a delivery due and none out waits only while every slot is taken.
    for (const [i, host] of hosts.entries()) {
      const due = [...deliveries.values()].some(
        (d) => d.endpoint === i && d.out === undefined && d.dueAt <= clock.now && !isOver(d),
      );
      if (due && (sends.out.get(i) ?? 0) === 0)
        expect(sends.total(), `${label}: ${host} (${behaviours[i]}) starved`).toBe(CONCURRENCY);
    }
  }

  // Answers every endpoint until nothing is left but what hangs; the clock runs on when nobody has anything to answer.
  async function finish(): Promise<void> {
    const open = () => [...deliveries.values()].some((d) => behaviours[d.endpoint] !== "hang" && !isOver(d));
    await answerUntilOver(
      { run, settle, check },
      { endpoints: behaviours.length, fakes: [sends.fake], open, tickMs: 1_000 },
    );
  }

  return { worker, deliveries, settle, run, check, finish };
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
        await runSteps(w, steps);
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
