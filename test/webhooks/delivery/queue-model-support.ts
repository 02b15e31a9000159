import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../src/webhooks/delivery/memory/index";
import {
  createPostgresDeliveryQueue,
  createPostgresEndpointStore,
} from "../../../src/webhooks/delivery/postgres/index";
import {
  type DeliveryConfig,
  type DeliveryEvent,
  type DeliveryState,
  defaultDeliveryConfig,
  transition,
} from "../../../src/webhooks/delivery/state-machine";
import { databases } from "../../support/databases";
import { type DeliveryStores, deliveryDatabase } from "./delivery-stores";

// What the model tests of DeliveryQueue (queue-model, retention-model) share: the state machine as a worker applies
// it to each outcome, and the queues they run their commands on. Each run opens its queue empty, reading the model's
// clock (also the queue's `now` option): nothing reads the wall clock.

// A fixed jitter draw, so the model knows when a retry falls due.
const config: DeliveryConfig = { ...defaultDeliveryConfig, random: () => 0.5 };

/** The state a worker stores after `event` at `now` for a claim in `state`: the state machine's, its jitter fixed. */
export const nextState = (state: DeliveryState, event: DeliveryEvent, now: number): DeliveryState =>
  transition(state, event, now, config).state;

/** How a claim ended that the worker stores: an attempt's answer or error, a deferral, a park (endpoint disabled). */
export type Outcome = "delivered" | "retry" | "retry_after" | "gone" | "timeout" | "url_refused" | "defer" | "parked";

/** The event the worker feeds the state machine ({@link nextState}) for `outcome` at `now`. */
export function outcomeEvent(outcome: Outcome, now: number): DeliveryEvent {
  switch (outcome) {
    case "delivered":
      return { type: "attempt", result: { kind: "response", status: 200, durationMs: 3 } };
    case "retry":
      return { type: "attempt", result: { kind: "response", status: 500, durationMs: 3 } };
    case "retry_after":
      return { type: "attempt", result: { kind: "response", status: 429, retryAfterMs: 120_000, durationMs: 3 } };
    case "gone":
      return { type: "attempt", result: { kind: "response", status: 410, durationMs: 3 } };
    case "timeout":
      return { type: "attempt", result: { kind: "error", errorKind: "timeout", durationMs: 3 } };
    case "url_refused":
      return { type: "attempt", result: { kind: "error", errorKind: "url_refused", durationMs: 0 } };
    case "defer":
      return { type: "defer", until: now + 10_000 };
    case "parked":
      return { type: "endpoint_disabled" };
  }
}

/** Whose rules a model follows where the contract leaves the queue a choice (claim order, when it purges). */
export type QueueKind = "memory" | "postgres";

/** A queue a model runs on. */
export interface QueueUnderTest {
  readonly name: string;
  readonly kind: QueueKind;
  /** Runs `body` on an empty endpoint store and queue whose clock is `clock`, and closes them however it ends. */
  withQueue<T>(clock: () => number, body: (stores: DeliveryStores) => Promise<T>): Promise<T>;
}

/**
 * The memory queue, then the PostgreSQL queue on each database (PGlite, and the server with DATABASE_URL). Call it in
 * the suite's `describe`: each database opens before the suite's first test and closes after its last.
 * @param options.prefix the name of the suite's schema starts with it
 * @param options.retainTerminalMs how long both queues keep ended deliveries (their default when not given)
 */
export function queuesUnderTest(options: { prefix: string; retainTerminalMs?: number }): QueueUnderTest[] {
  const { prefix, retainTerminalMs } = options;
  const memory: QueueUnderTest = {
    name: "memory",
    kind: "memory",
    withQueue(clock, body) {
      const endpoints = createMemoryEndpointStore();
      return body({ endpoints, queue: createMemoryDeliveryQueue({ endpoints, now: clock, retainTerminalMs }) });
    },
  };
  const postgres = databases().map((backend): QueueUnderTest => {
    const database = deliveryDatabase(backend, { prefix, max: 2 });
    let schema: string | undefined;
    return {
      name: backend.name,
      kind: "postgres",
      async withQueue(clock, body) {
        // One schema for the suite, its few rows deleted before each run: a TRUNCATE of every table took ~250 ms on
        // the server, longer than the run itself.
        if (schema === undefined) schema = await database.fresh();
        else {
          for (const table of ["webhook_attempts", "webhook_deliveries", "webhook_endpoints"]) {
            await database.db.query(`DELETE FROM "${schema}"."${table}"`);
          }
        }
        const queue = createPostgresDeliveryQueue({ client: database.db, schema, now: clock, retainTerminalMs });
        const endpoints = createPostgresEndpointStore({ client: database.db, schema, listen: false });
        try {
          return await body({ endpoints, queue });
        } finally {
          await queue.close();
        }
      },
    };
  });
  return [memory, ...postgres];
}
