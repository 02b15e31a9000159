import fc from "fast-check";
import type { DeliveryQueue } from "../../../../src/webhooks/delivery/delivery-queue";
import { createEvent } from "../../../../src/webhooks/delivery/event";

// What the worker model tests (worker-model, worker-circuit-model, two-workers-model) share: how they wait for the
// workers to settle, how a publish command publishes, and the commands of the circuit and rate models.

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Waits until `print` (what the workers have done: requests sent and out, attempts in flight, queue calls) has not
 * changed for a few turns of the event loop: the workers have done all they can. No wall-clock wait.
 */
export async function untilQuiet(print: () => string): Promise<void> {
  let last = print();
  for (let quiet = 0, turns = 0; quiet < 4 && turns < 2_000; turns++) {
    await turn();
    const now = print();
    quiet = now === last ? quiet + 1 : 0;
    last = now;
  }
}

/** One delivery a publish command made. */
export interface Published {
  readonly id: string;
  readonly endpointId: string;
  readonly eventId: string;
}

/**
 * Publishes `count` events at `now`: of type `all.created` (every endpoint subscribes) or `only<to>.created` (endpoint
 * `to` only), as the models' endpoints subscribe (`all.*`, `only<i>.*`).
 */
export async function publishCommand(
  queue: DeliveryQueue,
  now: number,
  to: number | "all",
  count: number,
): Promise<Published[]> {
  const out: Published[] = [];
  for (let i = 0; i < count; i++) {
    const type = to === "all" ? "all.created" : `only${to}.created`;
    const event = createEvent({ type, data: { i }, now });
    const published = await queue.publish(event, { now });
    for (const id of published.deliveryIds) {
      const stored = await queue.get(id);
      out.push({ id, endpointId: stored?.endpointId ?? "", eventId: event.id });
    }
  }
  return out;
}

/** An endpoint's behaviour in the circuit and rate models. */
export type Behaviour = "2xx" | "5xx" | "hang" | "refuse";

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
