import { expect } from "vitest";
import type { DeliveryRecord } from "../../../../src/webhooks/delivery/delivery-queue";
import type { FakeDispatcher, ModelWorld } from "./worker-model-harness";
import { type AnswerCommand, isOver, type ModelledDelivery, type TickCommand } from "./worker-model-support";

// What the worker model tests (worker-model, worker-circuit-model, two-workers-model) check after every step, and the
// drivers that run their steps and answer until every delivery is over. The world they run in is
// worker-model-harness.ts.

/**
 * The laws every model checks after each step: no violation seen, and each delivery stored as the model has it (its
 * status and attempts; when not over, due exactly when the schedule says if that is later, else not earlier, and not
 * after now unless `deferrable`). Returns the stored deliveries by the model's keys.
 */
export async function expectAsModelled(
  world: ModelWorld,
  label: string,
  options: {
    /** Whether a due delivery may be put off past now (a rate limit, an open circuit). */
    readonly deferrable: boolean;
    /** More about a delivery for its failure message. */
    readonly about?: (d: ModelledDelivery) => string;
  },
): Promise<Map<string, DeliveryRecord | undefined>> {
  expect(world.violations, label).toEqual([]);
  const now = world.clock.now;
  const stored = new Map<string, DeliveryRecord | undefined>();
  for (const [key, model] of world.deliveries) {
    const record = await world.queue.get(model.id);
    stored.set(key, record);
    const state = record?.state;
    const where = `${label}: ${key}${options.about === undefined ? "" : ` (${options.about(model)})`}`;
    expect([state?.status, state?.attempts], where).toEqual([model.status, model.attempts]);
    if (isOver(model)) continue;
    const due = state?.nextAttemptAt ?? Number.NaN;
    if (model.dueAt > now) expect(due, where).toBe(model.dueAt);
    else {
      expect(due, where).toBeGreaterThanOrEqual(model.dueAt);
      if (!options.deferrable) expect(due, where).toBeLessThanOrEqual(now);
    }
  }
  return stored;
}

/** Endpoint `endpoint`'s deliveries with no attempt out that the queue has due now (`stored`: expectAsModelled's). */
export function dueAndWaiting(world: ModelWorld, stored: Map<string, DeliveryRecord | undefined>, endpoint: number) {
  return [...world.deliveries.entries()].filter(([key, d]) => {
    const due = stored.get(key)?.state.nextAttemptAt ?? Number.POSITIVE_INFINITY;
    return d.endpoint === endpoint && d.out === undefined && due <= world.clock.now;
  });
}

/** What the drivers below need of a model's world. */
export interface Steps<C> {
  run(command: C): Promise<void>;
  settle(): Promise<void>;
  check(label: string): Promise<void>;
}

/** Runs each of `steps`, settles, and checks the model. */
export async function runSteps<C>(world: Steps<C>, steps: readonly C[]): Promise<void> {
  for (const [n, step] of steps.entries()) {
    await world.run(step);
    await world.settle();
    await world.check(`step ${n} ${JSON.stringify(step)}`);
  }
}

/**
 * To the end: while a delivery is `open` (at most 500 rounds) answers each of `endpoints`, lets the clock run on
 * `tickMs` when nothing more went out to the `fakes` (nobody had anything to answer), and checks the model.
 */
export async function answerUntilOver(
  world: Steps<AnswerCommand | TickCommand>,
  options: {
    readonly endpoints: number;
    readonly fakes: readonly FakeDispatcher[];
    readonly open: () => boolean;
    readonly tickMs: number;
  },
): Promise<void> {
  const sent = () => options.fakes.reduce((n, f) => n + f.sent.length + f.pending.size, 0);
  for (let round = 0; round < 500 && options.open(); round++) {
    const before = sent();
    for (let i = 0; i < options.endpoints; i++) await world.run({ type: "answer", endpoint: i });
    await world.settle();
    if (sent() === before) {
      await world.run({ type: "tick", ms: options.tickMs });
      await world.settle();
    }
    await world.check(`end round ${round}`);
  }
}
