import { onTestFinished } from "vitest";
import type { DeliveryQueue } from "../../../../src/webhooks/delivery/delivery-queue";
import type { DeliveryRequest } from "../../../../src/webhooks/delivery/delivery-request";
import { createEvent } from "../../../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../../src/webhooks/delivery/memory/index";
import {
  createDeliveryWorker,
  type DeliveryWorker,
  type DeliveryWorkerOptions,
  type Dispatcher,
} from "../../../../src/webhooks/delivery/node/index";
import { scheduleBackoff } from "../../../../src/webhooks/retry/backoff";
import { endpointFixture } from "../store-contract";
import { fakeDispatcher } from "./fake-dispatcher";
import { isOver, type ModelledDelivery } from "./worker-model-support";

// The world the worker model tests (worker-model, worker-circuit-model, two-workers-model) run their workers in: the
// memory queue and endpoint store on a fake clock, and fake dispatchers that hold every request until the test answers
// it and check each send against the caps. Nothing waits for wall-clock time: settle() waits until the workers have
// done all they can. Each test states its own model and laws beside it; what the models share is in
// worker-model-support.ts, the checks after each step and the drivers of the steps in worker-model-steps.ts.

/** Where the fake clock starts. */
export const T0 = 1_700_000_000_000;
/**
 * The workers' lease: longer than every run's fake clock moves. Leases are renewed by a real-time heartbeat, which a
 * fake clock that jumps outruns (not the worker's fault), so they are left out of the models (see the lease tests in
 * isolation.test.ts).
 */
export const LEASE_MS = 30 * 86_400_000;

export type FakeDispatcher = ReturnType<typeof fakeDispatcher>;

/** One worker's fake dispatcher, watched. */
export interface WatchedDispatcher {
  readonly fake: FakeDispatcher;
  /** Attempts out, per endpoint. */
  readonly out: Map<number, number>;
  /** Attempts out in all. */
  total(): number;
}

/** A worker's caps: attempts out at once, in all and to one endpoint. */
export interface Caps {
  readonly concurrency: number;
  readonly endpointConcurrency: number;
}

/** What a model adds at a send, beside the laws every model keeps. */
export interface SendHooks {
  /** Whether the worker's stop() resolved (it sends nothing after). */
  stopped?(): boolean;
  /** At each send, once the common laws are checked. */
  sent?(request: DeliveryRequest, endpoint: number): void;
  /** When the attempt is over (answered or aborted), before the worker hears of it. */
  over?(request: DeliveryRequest): void;
}

/** A worker's settings that each model states; the rest are the harness's. */
export interface ModelWorkerSettings
  extends Caps,
    Pick<DeliveryWorkerOptions, "rateLimiter" | "endpointCacheMs" | "onEvent"> {
  readonly queue: DeliveryQueue;
  readonly dispatcher: Dispatcher;
  /** Delays before each attempt (no jitter). */
  readonly delays: readonly number[];
  readonly circuit: NonNullable<DeliveryWorkerOptions["circuit"]>;
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Waits until `print` (what the workers have done: requests sent and out, attempts in flight, queue calls) has not
 * changed for a few turns of the event loop: the workers have done all they can. No wall-clock wait.
 */
async function untilQuiet(print: () => string): Promise<void> {
  let last = print();
  for (let quiet = 0, turns = 0; quiet < 4 && turns < 2_000; turns++) {
    await turn();
    const now = print();
    quiet = now === last ? quiet + 1 : 0;
    last = now;
  }
}

/**
 * The world of `rates.length` endpoints: endpoint `i` at `e<i>.example`, subscribed to `all.*` and `only<i>.*`, with
 * `rates[i]` as its rate limit; the memory queue on the fake `clock`; the model's `deliveries` by `${host} ${event
 * id}`; and `violations`, the laws seen broken as they happen (the models' checks expect none).
 */
export async function modelWorld(rates: readonly (number | null)[]) {
  const clock = { now: T0 };
  const endpoints = createMemoryEndpointStore();
  const queue: DeliveryQueue = createMemoryDeliveryQueue({ endpoints, now: () => clock.now });
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
  const deliveries = new Map<string, ModelledDelivery>();
  const violations: string[] = [];
  // Every step of the queue the workers take (claims, stores), counted: they are quiet when nothing moves.
  let moves = 0;
  const keyOf = (request: DeliveryRequest) => `${new URL(request.url).host} ${request.headers["webhook-id"]}`;
  const endpointOf = (request: DeliveryRequest) => hosts.indexOf(new URL(request.url).host);

  /** Publishes `count` events of type `all.created` (every endpoint's) or `only<to>.created`, then models them. */
  async function publish(to: number | "all", count: number): Promise<void> {
    const published: { id: string; endpointId: string; eventId: string }[] = [];
    for (let i = 0; i < count; i++) {
      const type = to === "all" ? "all.created" : `only${to}.created`;
      const event = createEvent({ type, data: { i }, now: clock.now });
      for (const id of (await queue.publish(event, { now: clock.now })).deliveryIds) {
        published.push({ id, endpointId: (await queue.get(id))?.endpointId ?? "", eventId: event.id });
      }
    }
    for (const { id, endpointId, eventId } of published) {
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
  }

  /** The queue as a worker sees it: `over` replaces members of it, and each claim and store is counted. */
  function countedQueue(over: Partial<DeliveryQueue> = {}): DeliveryQueue {
    const claim = over.claim ?? ((...args: Parameters<DeliveryQueue["claim"]>) => queue.claim(...args));
    const complete = over.complete ?? ((...args: Parameters<DeliveryQueue["complete"]>) => queue.complete(...args));
    return Object.assign(Object.create(queue) as DeliveryQueue, over, {
      claim: (...args: Parameters<DeliveryQueue["claim"]>) => {
        moves++;
        return claim(...args);
      },
      complete: (...args: Parameters<DeliveryQueue["complete"]>) => {
        moves++;
        return complete(...args);
      },
    });
  }

  /**
   * Worker `worker`'s fake dispatcher (every request waits for the test to answer it), each send checked against the
   * laws every model keeps: within the worker's caps, only a published delivery, not over, due, none of it out.
   */
  function watch(worker: number, caps: Caps, hooks: SendHooks = {}): WatchedDispatcher {
    const fake = fakeDispatcher(() => true);
    const out = new Map<number, number>();
    const total = () => [...out.values()].reduce((a, b) => a + b, 0);
    const dispatch = fake.dispatcher.dispatch.bind(fake.dispatcher);
    fake.dispatcher.dispatch = (request, options) => {
      const key = keyOf(request);
      const endpoint = endpointOf(request);
      const delivery = deliveries.get(key);
      const by = `worker ${worker}`;
      if (hooks.stopped?.()) violations.push(`${by} sent ${key} after its stop()`);
      if (total() + 1 > caps.concurrency) violations.push(`${by}: ${total() + 1} attempts out at once`);
      if ((out.get(endpoint) ?? 0) + 1 > caps.endpointConcurrency) violations.push(`${by}: ${key} over its cap`);
      if (delivery === undefined) violations.push(`sent ${key}, never published`);
      else {
        if (delivery.out !== undefined) violations.push(`${by} sent ${key}, out at worker ${delivery.out}`);
        if (isOver(delivery)) violations.push(`sent ${key}, ${delivery.status}`);
        if (delivery.dueAt > clock.now) {
          violations.push(`sent ${key} at +${clock.now - T0}, due at +${delivery.dueAt - T0}`);
        }
        delivery.out = worker;
      }
      hooks.sent?.(request, endpoint);
      out.set(endpoint, (out.get(endpoint) ?? 0) + 1);
      const sent = dispatch(request, options);
      // Registered before the worker's own handler: the count drops before the worker frees the slot.
      void sent.then(() => {
        out.set(endpoint, (out.get(endpoint) ?? 1) - 1);
        if (delivery !== undefined) delivery.out = undefined;
        hooks.over?.(request);
      });
      return sent;
    };
    return { fake, out, total };
  }

  /** A worker on the fake clock, with no jitter, no disabling and the long lease; stopped when the test ends. */
  function worker({ delays, ...settings }: ModelWorkerSettings): DeliveryWorker {
    const made = createDeliveryWorker({
      endpoints,
      now: () => clock.now,
      random: () => 0.5,
      retry: scheduleBackoff([...delays], 0),
      disableAfterMs: Number.POSITIVE_INFINITY,
      leaseMs: LEASE_MS,
      stopGraceMs: 0,
      ...settings,
    });
    onTestFinished(() => made.stop());
    return made;
  }

  /** Until nothing the `workers` do through the `fakes` and the queue has moved for a few turns of the event loop. */
  async function settle(fakes: readonly FakeDispatcher[], workers: readonly DeliveryWorker[]): Promise<void> {
    const print = () =>
      `${fakes.map((f) => `${f.sent.length} ${f.pending.size}`)} ${workers.map((w) => w.inFlight)} ${moves}`;
    await untilQuiet(print);
  }

  return { clock, queue, hosts, ids, deliveries, violations, keyOf, publish, countedQueue, watch, worker, settle };
}

export type ModelWorld = Awaited<ReturnType<typeof modelWorld>>;
