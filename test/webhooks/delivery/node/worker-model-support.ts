import fc from "fast-check";
import type { AttemptResult } from "../../../../src/webhooks/delivery/attempt";
import type { DeliveryStatus } from "../../../../src/webhooks/delivery/state-machine";

// What the worker model tests (worker-model, worker-circuit-model, two-workers-model) share of their models: what a
// model knows of a delivery and how an answer moves it on, how an endpoint behaves and answers, the commands they are
// driven by, and the settings, commands and rate law of the circuit and rate models. The world they run in is
// worker-model-harness.ts; each test states its own laws.

/** What a model knows of one delivery. */
export interface ModelledDelivery {
  readonly id: string;
  /** Its endpoint's index. */
  readonly endpoint: number;
  status: DeliveryStatus;
  attempts: number;
  /** When the retry schedule makes it due (whether the queue may put it off later is each model's law). */
  dueAt: number;
  /** The worker an attempt of it is out at; `undefined`: none is out. */
  out: number | undefined;
}

/** Delivered or exhausted: no attempt of it goes out again. */
export const isOver = (d: ModelledDelivery) => d.status === "delivered" || d.status === "exhausted";

/**
 * The model's delivery after the answer to its attempt at `now`, as the state machine documents it: a 2xx delivers
 * it, else it is retried on the schedule (`delays`) until the last attempt exhausts it. Returns whether it succeeded.
 */
export function recordAnswer(
  delivery: ModelledDelivery,
  result: AttemptResult,
  now: number,
  delays: readonly number[],
): boolean {
  delivery.attempts++;
  const success = result.kind === "response" && result.status < 300;
  if (success) delivery.status = "delivered";
  else if (delivery.attempts >= delays.length) delivery.status = "exhausted";
  else {
    delivery.status = "failed";
    delivery.dueAt = now + (delays[delivery.attempts] as number);
  }
  return success;
}

/** An endpoint's behaviour: how it answers each request the test answers. */
export type Behaviour = "2xx" | "5xx" | "hang" | "refuse";

/** The answer an endpoint of `behaviour` gives; `undefined`: none (it hangs). */
export function answerOf(behaviour: Behaviour): AttemptResult | undefined {
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

/** Publishes `count` events to endpoint `to`, or to every endpoint. */
export interface PublishCommand {
  readonly type: "publish";
  readonly to: number | "all";
  readonly count: number;
}

/** Answers every request out to `endpoint` as it behaves. */
export interface AnswerCommand {
  readonly type: "answer";
  readonly endpoint: number;
}

/** Moves the fake clock on by `ms` and wakes the workers. */
export interface TickCommand {
  readonly type: "tick";
  readonly ms: number;
}

/** Sets how `endpoint` answers from now on. */
export interface BehaveCommand {
  readonly type: "behave";
  readonly endpoint: number;
  readonly behaviour: Behaviour;
}

// The circuit and rate models' settings, which the tick lengths of circuitCommands are chosen around.
/** Delays before each attempt (no jitter). */
export const DELAYS = [0, 500, 1_000, 2_000] as const;
export const MAX_ATTEMPTS = DELAYS.length;
export const CIRCUIT = { window: 4, minimumAttempts: 3, failureRatio: 0.6, coolDownMs: 2_000 } as const;
/** The endpoint pacer's burst (createEndpointRateLimiter's `burst`; its default is 1). */
export const BURST = 2;

/** The commands of the circuit and rate models, with their weights: publish, behave, answer, tick. */
export const circuitCommands = (endpoints: number) => [
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant("publish" as const),
      to: fc.oneof(fc.constant("all" as const), fc.nat(endpoints - 1)),
      count: fc.integer({ min: 1, max: 5 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant("behave" as const),
      endpoint: fc.nat(endpoints - 1),
      // Failures weigh most: the circuit opens, re-opens after failed probes, closes.
      behaviour: fc.constantFrom<Behaviour>("2xx", "5xx", "5xx", "5xx", "hang", "refuse"),
    }),
  },
  { weight: 5, arbitrary: fc.record({ type: fc.constant("answer" as const), endpoint: fc.nat(endpoints - 1) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant("tick" as const),
      ms: fc.constantFrom(1, 100, 199, 200, 500, 1_000, 2_000),
    }),
  },
];

/**
 * The GCRA law the pacer keeps (docs/rate-limits.md, "The guarantee"; gcra.ts), checked at the last of `starts`: with
 * emission interval T = 1000 / rate ms, in every closed interval of length L at most `burst + ⌊L / T⌋` attempts start.
 * Checked on the attempts' starts, in order on the fake clock: what the endpoint's owner sees is when requests arrive.
 * Returns how it was broken; `undefined`: it was not, or there is no rate.
 */
export function rateBreach(
  starts: readonly number[],
  rate: number | null | undefined,
  burst: number,
): string | undefined {
  if (rate === null || rate === undefined) return undefined;
  const at = starts.at(-1) ?? 0;
  for (let i = 0; i < starts.length; i++) {
    const count = starts.length - i;
    const span = at - (starts[i] as number);
    // count ≤ burst + ⌊span · rate / 1000⌋ (exact: the rates here are whole or quarters).
    if (count > burst + Math.floor((span * rate) / 1000)) {
      return `(${rate}/s): ${count} attempts started within ${span} ms [${starts}]`;
    }
  }
  return undefined;
}
