import { afterEach, describe, expect, it, vi } from "vitest";
import type { ClaimedDelivery, DeliveryQueue } from "../../../../src/webhooks/delivery/delivery-queue";
import type { WebhookEndpoint } from "../../../../src/webhooks/delivery/endpoint";
import { createEvent } from "../../../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../../src/webhooks/delivery/memory/index";
import {
  createDeliveryWorker,
  type DeliveryWorkerEvent,
  type DeliveryWorkerOptions,
} from "../../../../src/webhooks/delivery/node/index";
import { scheduleBackoff } from "../../../../src/webhooks/retry/backoff";
import { endpointFixture } from "../store-contract";
import { fakeDispatcher } from "./fake-dispatcher";

// Issue 15: no bad endpoint can stall the others; stop is prompt and loses nothing; leases outlive slow attempts.
// Everything here runs on a fake clock and a fake dispatcher (no sockets): the test waits for states, never for time.

const T0 = 1_700_000_000_000;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

const until = async (condition: () => boolean | Promise<boolean>) => {
  while (!(await condition())) await new Promise((resolve) => setImmediate(resolve));
};

async function world(
  hangingHosts: readonly string[],
  options: Partial<DeliveryWorkerOptions> = {},
  // What the worker sees of the queue (a queue that stops answering); the test reads the queue itself.
  seen: (queue: DeliveryQueue) => DeliveryQueue = (queue) => queue,
) {
  const clock = { now: T0 };
  const endpoints = createMemoryEndpointStore();
  const queue = createMemoryDeliveryQueue({ endpoints, now: () => clock.now });
  const fake = fakeDispatcher((host) => hangingHosts.includes(host));
  const endpoint = async (host: string, events: string[]): Promise<WebhookEndpoint> => {
    const made = endpointFixture({ url: `https://${host}/hook`, enabledEvents: events });
    await endpoints.create(made);
    return made;
  };
  const worker = createDeliveryWorker({
    queue: seen(queue),
    endpoints,
    dispatcher: fake.dispatcher,
    now: () => clock.now,
    circuit: false,
    stopGraceMs: 0,
    ...options,
  });
  cleanups.push(() => worker.stop());
  return { clock, endpoints, queue, fake, endpoint, worker };
}

// The clock readings of the queue's lease renewals (the worker's heartbeat), as they happen.
function recordRenewals(queue: DeliveryQueue): number[] {
  const renewals: number[] = [];
  const renew = queue.renew.bind(queue);
  queue.renew = (claims, now, leaseMs) => {
    renewals.push(now);
    return renew(claims, now, leaseMs);
  };
  return renewals;
}

async function publish(queue: DeliveryQueue, type: string, count: number, now: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    ids.push(...(await queue.publish(createEvent({ type, data: { i }, now }), { now })).deliveryIds);
  }
  return ids;
}

// First in the file: no earlier test's timers are still pending when this one counts.
describe("waiting for the worker", () => {
  const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;

  it("stop() and drained() leave no timer of theirs behind once they return", async () => {
    const before = timers();
    const { queue, fake, endpoint, worker } = await world(["slow.example"], { stopGraceMs: 60_000 });
    await endpoint("slow.example", ["*"]);
    await publish(queue, "z.created", 1, T0);
    worker.start();
    await until(() => fake.pending.size === 1);
    // drained() waits while the attempt is out; its answer ends the wait before the wait's own timer does.
    const drained = worker.drained();
    for (const pending of fake.pending) pending.answer({ kind: "response", status: 200, durationMs: 5 });
    await drained;
    await worker.stop();
    // At most as many: a timer of the runner's or an earlier test's that was out at the start may have ended since.
    expect(timers()).toBeLessThanOrEqual(before);
  });
});

describe("a delivery worker beside endpoints that never answer (issue 15)", () => {
  it("gives the healthy endpoint its full share while 8 hang: each hanging one holds a single slot", async () => {
    const hanging = Array.from({ length: 8 }, (_, i) => `hang-${i}.example`);
    const { queue, fake, endpoint, worker } = await world(hanging);
    for (const host of hanging) await endpoint(host, ["slow.*"]);
    const healthy = await endpoint("healthy.example", ["fast.*"]);
    await publish(queue, "slow.created", 50, T0); // 8 × 50 deliveries that will never be answered
    const fast = await publish(queue, "fast.created", 400, T0);
    worker.start();
    await until(async () => fake.sentTo("healthy.example") >= 400);
    for (const host of hanging) expect(fake.maxInFlight(host), host).toBe(1);
    // Not starved of slots: the healthy endpoint reached its own cap (16 at once).
    expect(fake.maxInFlight("healthy.example")).toBe(16);
    await until(async () => (await queue.get(fast.at(-1) as string))?.state.status === "delivered");
    const states = await Promise.all(fast.map(async (id) => (await queue.get(id))?.state));
    expect(states.every((s) => s?.status === "delivered" && s.attempts === 1)).toBe(true);
    expect((await queue.list(healthy.id, { limit: 1_000 })).length).toBe(400);
  });

  it("cuts an endpoint whose attempts time out to one at a time, and lets it grow back on successes (AIMD)", async () => {
    let down = true;
    const { queue, fake, endpoint, worker } = await world([], { retry: scheduleBackoff(Array(50).fill(0), 0) });
    const flaky = await endpoint("flaky.example", ["*"]);
    // Time-outs while down, 200 once up.
    const dispatch = fake.dispatcher.dispatch;
    fake.dispatcher.dispatch = (request, options) =>
      down
        ? dispatch(request, options).then(() => ({ kind: "error", errorKind: "timeout", durationMs: 15_000 }) as const)
        : dispatch(request, options);
    await publish(queue, "x.created", 40, T0);
    worker.start();
    await until(() => fake.sent.length >= 30);
    expect(fake.maxInFlight("flaky.example")).toBe(1);
    down = false;
    await publish(queue, "x.created", 200, T0);
    await until(() => fake.sent.length >= 250);
    await worker.drained();
    // Grew back to its cap on successes.
    expect(fake.maxInFlight("flaky.example")).toBe(16);
    expect((await queue.list(flaky.id, { limit: 1_000, status: ["delivered"] })).length).toBe(240);
  });
});

describe("fair claims (issue 15)", () => {
  it("a backlog of 100,000 deliveries does not delay another endpoint's next delivery beyond one claim", async () => {
    const { queue, fake, endpoint, worker, clock } = await world([], { concurrency: 8 });
    await endpoint("backlog.example", ["bulk.*"]);
    await endpoint("quiet.example", ["one.*"]);
    await publish(queue, "bulk.created", 100_000, T0 - 60_000); // all of them due long before
    worker.start();
    await until(() => fake.sentTo("backlog.example") >= 1_000);
    const before = fake.sent.length;
    clock.now += 1_000;
    await publish(queue, "one.created", 1, clock.now);
    worker.wake();
    await until(() => fake.sentTo("quiet.example") === 1);
    const at = fake.sent.findIndex((r) => r.url.includes("quiet.example"));
    // Sent within one claim's worth of deliveries (concurrency + lookahead) of its publication.
    expect(at - before).toBeLessThanOrEqual(8 + 8);
    await worker.stop();
  });
});

describe("look-ahead (issue 15)", () => {
  it("claims further ahead when its claims take long enough for slots to go idle, as a database's round trip does", async () => {
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints, now: () => T0 });
    const limits: number[] = [];
    // The same queue with each claim answered a few milliseconds late; meanwhile the fake consumer answers every attempt.
    const slow: DeliveryQueue = {
      ...queue,
      claim: async (options) => {
        limits.push(options.limit);
        await new Promise((resolve) => setTimeout(resolve, 3));
        return queue.claim(options);
      },
    };
    const fake = fakeDispatcher();
    const worker = createDeliveryWorker({
      queue: slow,
      endpoints,
      dispatcher: fake.dispatcher,
      now: () => T0,
      circuit: false,
      concurrency: 32,
    });
    cleanups.push(() => worker.stop());
    await endpoints.create(endpointFixture({ url: "https://far.example/hook", enabledEvents: ["far.*"] }));
    await publish(queue, "far.created", 600, T0);
    worker.start();
    await worker.drained();
    expect(fake.sentTo("far.example")).toBe(600);
    // It began with 32 slots and 8 ahead, and grew toward 32 ahead, never past.
    expect(limits[0]).toBe(32 + 8);
    expect(Math.max(...limits)).toBeGreaterThan(32 + 8);
    expect(Math.max(...limits)).toBeLessThanOrEqual(32 + 32);
  });
});

describe("stop() (issue 15)", () => {
  it("starts no attempt after stop(), aborts those in flight after the grace period, and hands them back uncounted", async () => {
    const { queue, fake, endpoint, worker } = await world(["hang.example"], { stopGraceMs: 0 });
    const dead = await endpoint("hang.example", ["*"]);
    await endpoint("ok.example", ["*"]);
    const ids = await publish(queue, "y.created", 30, T0);
    worker.start();
    await until(() => fake.pending.size === 1 && fake.sentTo("ok.example") >= 5);
    await worker.stop();
    const sentAtStop = fake.sent.length;
    expect([...fake.pending]).toEqual([]); // the hanging attempt was aborted
    expect(fake.closed()).toBe(false); // a dispatcher passed in is the caller's to close
    // Nothing more goes out once stopped.
    await new Promise((resolve) => setImmediate(resolve));
    expect(fake.sent.length).toBe(sentAtStop);
    expect(worker.inFlight).toBe(0);
    const states = await Promise.all(ids.map(async (id) => (await queue.get(id))?.state));
    const toDead = (await queue.list(dead.id, { limit: 100 })).map((d) => d.state);
    // The aborted attempt is not a failed attempt: its delivery is pending, due at once, with no attempt used.
    expect(toDead.every((s) => s.status === "pending" && s.attempts === 0 && (s.nextAttemptAt ?? 0) <= T0)).toBe(true);
    expect(states.every((s) => s?.status === "pending" || s?.status === "delivered")).toBe(true);
  });

  it("lets an attempt in flight finish within the grace period, and stores its outcome", async () => {
    const { queue, fake, endpoint, worker } = await world(["slow.example"], { stopGraceMs: 60_000 });
    await endpoint("slow.example", ["*"]);
    const [id] = await publish(queue, "z.created", 1, T0);
    worker.start();
    await until(() => fake.pending.size === 1);
    const stopped = worker.stop();
    for (const pending of fake.pending) pending.answer({ kind: "response", status: 200, durationMs: 5 });
    await stopped;
    expect((await queue.get(id as string))?.state).toMatchObject({ status: "delivered", attempts: 1 });
  });
});

describe("stop() while a delivery is handed a slot (issue 15)", () => {
  // Regression: a slot freed by an attempt's end was granted to a waiting delivery, and stop() coming in the microtasks
  // between the grant and the waiter's turn did not stop it: a new attempt went out after stop().
  it.each([0, 1, 2, 3, 4, 5, 6])(
    "starts no attempt after a stop() %i microtasks after a slot is freed",
    async (depth) => {
      const errors: unknown[] = [];
      const { queue, fake, endpoint, worker } = await world(["slow.example"], {
        concurrency: 1,
        stopGraceMs: 0,
        // The second delivery is claimed on the next poll (the endpoint's share is one at first): soon, not in a second.
        pollIntervalMs: 5,
        onEvent: (event) => event.type === "error" && errors.push(event.error),
      });
      await endpoint("slow.example", ["*"]);
      const ids = await publish(queue, "z.created", 2, T0);
      worker.start();
      // Both claimed: the first in flight, the second waiting for its turn.
      await until(() => fake.pending.size === 1 && worker.inFlight === 2);
      let sentAtStop = -1;
      let stopped: Promise<void> | undefined;
      let chain = Promise.resolve();
      for (let i = 0; i < depth; i++) chain = chain.then(() => undefined);
      for (const pending of fake.pending) pending.answer({ kind: "response", status: 200, durationMs: 5 });
      await chain.then(() => {
        sentAtStop = fake.sent.length;
        stopped = worker.stop();
      });
      await stopped;
      expect(fake.sent.length).toBe(sentAtStop);
      expect(errors).toEqual([]);
      const states = await Promise.all(ids.map(async (id) => (await queue.get(id))?.state));
      expect(states.map((state) => [state?.status, state?.attempts])).toEqual([
        ["delivered", 1],
        ["pending", 0],
      ]);
    },
  );
});

describe("stop() while a delivery turns from its endpoint's turn to a slot (issue 15)", () => {
  // Regression: a delivery given its endpoint's turn just before stop() asked for a slot after stop() had released
  // every waiter; none was free, so it waited (its claim held, stop() with it) until an attempt in flight ended, at
  // the end of the grace period.
  it("hands it back at once, uncounted, without waiting for the attempts in flight", async () => {
    const { queue, fake, endpoint, worker } = await world(["x.example", "z.example"], {
      concurrency: 1,
      stopGraceMs: 60_000,
      pollIntervalMs: 5,
    });
    await endpoint("x.example", ["x.*"]);
    await endpoint("z.example", ["z.*"]);
    const [first, second] = await publish(queue, "x.created", 2, T0);
    const [other] = await publish(queue, "z.created", 1, T0);
    worker.start();
    // x's first delivery holds the slot; its second waits for x's turn, z's for the slot.
    await until(() => fake.pending.size === 1 && worker.inFlight === 3);
    expect(fake.sentTo("x.example")).toBe(1);
    let stopped: Promise<void> | undefined;
    const dispatch = fake.dispatcher.dispatch.bind(fake.dispatcher);
    // Stopped as z's delivery goes out with the freed slot, before x's second takes up the turn x's first freed.
    fake.dispatcher.dispatch = (request, options) => {
      stopped ??= worker.stop();
      return dispatch(request, options);
    };
    for (const pending of fake.pending) pending.answer({ kind: "response", status: 200, durationMs: 5 });
    await until(() => stopped !== undefined);
    try {
      for (let turn = 0; turn < 20 && worker.inFlight > 1; turn++) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(worker.inFlight).toBe(1); // z's attempt, still in its grace period
      expect((await queue.get(second as string))?.state).toMatchObject({ status: "pending", attempts: 0 });
    } finally {
      for (const pending of fake.pending) pending.answer({ kind: "response", status: 200, durationMs: 5 });
      await stopped;
    }
    expect((await queue.get(first as string))?.state.status).toBe("delivered");
    expect((await queue.get(other as string))?.state.status).toBe("delivered");
    expect(fake.sentTo("x.example")).toBe(1);
  });
});

describe("stop() while a lease renewal never settles (issue 15)", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  // Regression: the hanging renewal was never given up, so after stop() and start() no lease was renewed again.
  it("ends within the grace period, renews nothing once stopped, and renews again after start()", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
    const events: DeliveryWorkerEvent[] = [];
    const { queue, fake, endpoint, worker } = await world(["slow.example"], {
      leaseMs: 3_000,
      stopGraceMs: 1_000,
      onEvent: (event) => events.push(event),
    });
    await endpoint("slow.example", ["*"]);
    const [id] = await publish(queue, "a.created", 1, T0);
    let renewals = 0;
    queue.renew = () => {
      renewals++;
      return new Promise<string[]>(() => {});
    };
    worker.start();
    await until(() => fake.pending.size === 1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(renewals).toBe(1);
    let stopped = false;
    const stopping = worker.stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(1_000); // the grace period: the attempt is aborted and handed back
    await until(() => stopped);
    await stopping;
    expect(events.filter((event) => event.type === "error")).toEqual([]);
    expect((await queue.get(id as string))?.state).toMatchObject({ status: "pending", attempts: 0 });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(renewals).toBe(1);
    worker.start();
    await until(() => fake.pending.size === 1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(renewals).toBe(2);
    for (const pending of fake.pending) pending.answer({ kind: "response", status: 200, durationMs: 1 });
    await until(() => worker.inFlight === 0);
  });
});

describe("stop() against a queue that never answers (issue 15)", () => {
  // Regression: an aborted attempt's hand-back waited on a queue that never answered (a database hanging, not down),
  // so stop() never resolved and SIGTERM handlers hung until the process was killed.
  it("resolves 1 s past the grace period, reports stop_timed_out and leaves the delivery to its lease", async () => {
    let hanging = false;
    const never = new Promise<boolean>(() => {});
    const events: DeliveryWorkerEvent[] = [];
    const { clock, queue, fake, endpoint, worker } = await world(
      ["hang.example"],
      { onEvent: (event) => events.push(event) },
      (memory) =>
        Object.assign(Object.create(memory) as DeliveryQueue, {
          complete: (...args: Parameters<DeliveryQueue["complete"]>) => (hanging ? never : memory.complete(...args)),
        }),
    );
    await endpoint("hang.example", ["*"]);
    const [id] = await publish(queue, "x.created", 1, T0);
    worker.start();
    await until(() => fake.pending.size === 1);
    hanging = true;
    await worker.stop();
    const errors = events.flatMap((event) => (event.type === "error" ? [event.error] : []));
    expect(errors).toEqual([expect.objectContaining({ name: "WebhookDeliveryError", code: "stop_timed_out" })]);
    expect(String((errors[0] as Error).message)).toMatch(/1 delivery left to their leases/);
    // Still claimed, never marked failed: once its lease ends, another worker claims it.
    const state = (await queue.get(id as string))?.state;
    expect(state).toMatchObject({ status: "pending", attempts: 0 });
    clock.now += 10 * 60_000;
    expect((await queue.claim({ now: clock.now, leaseMs: 30_000, limit: 10 })).map((claim) => claim.id)).toEqual([id]);
  });
});

describe("leases (issue 15)", () => {
  it("renews the lease while an attempt runs: no other worker can claim it, however slow the consumer", async () => {
    const { queue, fake, endpoint, worker, clock } = await world(["slow.example"], { leaseMs: 1_000 });
    await endpoint("slow.example", ["*"]);
    const [id] = await publish(queue, "z.created", 1, T0);
    const renewals = recordRenewals(queue);
    worker.start();
    await until(() => fake.pending.size === 1);
    // Three leases' worth of the (fake) clock pass while the consumer takes its time; the heartbeat keeps renewing.
    for (let step = 0; step < 6; step++) {
      clock.now += 500;
      const seen = renewals.length;
      await until(() => renewals.length > seen);
      expect(await queue.claim({ limit: 10, now: clock.now, leaseMs: 1_000 })).toEqual([]);
    }
    for (const pending of fake.pending) pending.answer({ kind: "response", status: 200, durationMs: 3_000 });
    await until(async () => (await queue.get(id as string))?.state.status === "delivered");
    expect(fake.sent).toHaveLength(1);
  });

  // Regression: a delivery held while it waited for a slot was sent whatever had become of its lease meanwhile. After
  // the lease ran out (the clock stepped on, a heartbeat that could not reach the queue) another worker could claim
  // and send it, and this worker sent it again once a slot came free: a duplicate from an expired lease.
  it("sends no delivery whose lease ran out while it waited for a slot: another worker owns it now", async () => {
    const { queue, fake, endpoint, worker, clock } = await world(["slow.example"], { leaseMs: 1_000, concurrency: 1 });
    const slow = await endpoint("slow.example", ["a.*"]);
    await endpoint("fast.example", ["b.*"]);
    await publish(queue, "a.created", 1, T0);
    const [id] = await publish(queue, "b.created", 1, T0);
    // The heartbeat cannot reach the queue (the database is away for a moment).
    queue.renew = () => Promise.reject(new Error("database unreachable"));
    worker.start();
    await until(() => fake.pending.size === 1 && worker.inFlight === 2);
    // The fast endpoint's delivery waits for the one slot. Its lease ends; another worker claims and delivers it.
    clock.now += 1_001;
    const [taken] = await queue.claim({
      limit: 10,
      now: clock.now,
      leaseMs: 60_000,
      endpointLimits: new Map([[slow.id, 0]]),
    });
    expect(taken?.id).toBe(id);
    await queue.complete(taken as ClaimedDelivery, { ...(taken as ClaimedDelivery).state, status: "delivered" });
    for (const pending of fake.pending) pending.answer({ kind: "response", status: 200, durationMs: 1 });
    await until(() => worker.inFlight === 0);
    expect(fake.sentTo("fast.example")).toBe(0);
  });

  // The same when the lease is lost with no clock running out: the heartbeat learns it from the queue.
  it("sends no delivery the heartbeat found another worker holds", async () => {
    const { queue, fake, endpoint, worker, clock } = await world(["slow.example"], { leaseMs: 1_000, concurrency: 1 });
    const slow = await endpoint("slow.example", ["a.*"]);
    await endpoint("fast.example", ["b.*"]);
    await publish(queue, "a.created", 1, T0);
    const [id] = await publish(queue, "b.created", 1, T0);
    const renewed: string[][] = [];
    const renew = queue.renew.bind(queue);
    queue.renew = async (claims, now, leaseMs) => {
      const ids = await renew(claims, now, leaseMs);
      renewed.push(ids);
      return ids;
    };
    worker.start();
    await until(() => fake.pending.size === 1 && worker.inFlight === 2);
    // Another worker, whose clock is ahead, finds the lease over and claims the delivery.
    const [taken] = await queue.claim({
      limit: 10,
      now: clock.now + 2_000,
      leaseMs: 60_000,
      endpointLimits: new Map([[slow.id, 0]]),
    });
    expect(taken?.id).toBe(id);
    await until(() => renewed.length > 0);
    expect(renewed.at(-1)).not.toContain(id);
    for (const pending of fake.pending) pending.answer({ kind: "response", status: 200, durationMs: 1 });
    await until(() => worker.inFlight === 0);
    expect(fake.sentTo("fast.example")).toBe(0);
    expect(fake.sentTo("slow.example")).toBe(1);
  });

  // Regression: an outcome the queue refused to store (the lease was lost mid-attempt, the delivery another worker's
  // claim now) was still announced: delivery.exhausted for a delivery that another worker went on to deliver.
  it("announces no delivery outcome the queue did not store because the lease was lost", async () => {
    const events: DeliveryWorkerEvent[] = [];
    const { queue, fake, endpoint, worker, clock } = await world(["slow.example"], {
      leaseMs: 1_000,
      retry: () => undefined,
      onEvent: (event) => events.push(event),
    });
    await endpoint("slow.example", ["*"]);
    const [id] = await publish(queue, "a.created", 1, T0);
    queue.renew = () => Promise.reject(new Error("database unreachable"));
    worker.start();
    await until(() => fake.pending.size === 1);
    clock.now += 1_001;
    const [taken] = await queue.claim({ limit: 10, now: clock.now, leaseMs: 60_000 });
    expect(taken?.id).toBe(id);
    for (const pending of fake.pending) pending.answer({ kind: "response", status: 500, durationMs: 1 });
    await until(() => worker.inFlight === 0);
    // The attempt was made (and logged), but the delivery is the other worker's, not exhausted.
    expect(events.filter((event) => event.type === "attempt")).toHaveLength(1);
    expect(events.filter((event) => event.type.startsWith("delivery."))).toEqual([]);
    expect((await queue.get(id as string))?.state.status).toBe("pending");
  });

  it("announces no parking the queue refused because the lease was lost while the endpoint was read", async () => {
    const events: DeliveryWorkerEvent[] = [];
    const { queue, fake, endpoints, endpoint, worker, clock } = await world([], {
      leaseMs: 1_000,
      onEvent: (event) => events.push(event),
    });
    const gone = await endpoint("gone.example", ["*"]);
    const [id] = await publish(queue, "a.created", 1, T0);
    await endpoints.update(gone.id, { status: "disabled", disabledReason: "manual", disabledAt: T0 });
    queue.renew = () => Promise.reject(new Error("database unreachable"));
    // The endpoint store answers slowly: the lease ends meanwhile and another worker claims the delivery.
    let answer: (() => void) | undefined;
    const get = endpoints.get.bind(endpoints);
    endpoints.get = (endpointId) => new Promise((resolve) => (answer = () => resolve(get(endpointId))));
    worker.start();
    await until(() => answer !== undefined);
    clock.now += 1_001;
    const [taken] = await queue.claim({ limit: 10, now: clock.now, leaseMs: 60_000 });
    expect(taken?.id).toBe(id);
    (answer as () => void)();
    await until(() => worker.inFlight === 0);
    expect(events.filter((event) => event.type.startsWith("delivery."))).toEqual([]);
    expect((await queue.get(id as string))?.state.status).toBe("pending");
    expect(fake.sent).toHaveLength(0);
  });
});

describe("the circuit breaker shared by every worker on a queue (issue 15)", () => {
  // Before: a probe that waited for a slot past its hold on the board (its lease renewed meanwhile) went out when the
  // slot came, though another worker had taken the probe once the hold ran out: two probes at once.
  it("sends no probe whose hold on the board ran out while it waited for a slot: another worker may hold it", async () => {
    const circuit = { window: 1, minimumAttempts: 1, failureRatio: 1, coolDownMs: 10_000 };
    const { queue, fake, endpoint, worker, clock } = await world(["slow.example"], {
      leaseMs: 1_000,
      concurrency: 1,
      circuit,
      endpointCacheMs: 0,
    });
    await endpoint("slow.example", ["a.*"]);
    const probed = await endpoint("probe.example", ["b.*"]);
    const board = queue.sharedCircuits?.();
    if (board === undefined) throw new Error("the memory queue shares its circuits");
    await board.open(probed.id, T0); // opened by an earlier failure: a probe may go from T0
    await publish(queue, "a.created", 1, T0);
    const [id] = await publish(queue, "b.created", 1, T0);
    const renewals = recordRenewals(queue);
    worker.start();
    // The slow endpoint's attempt holds the one slot; the probe, won at admission (hold: the lease, 1 s), waits.
    await until(() => fake.pending.size === 1 && worker.inFlight === 2);
    expect(fake.sentTo("slow.example")).toBe(1);
    expect(await board.takeProbe(probed.id, T0 + 1, T0 + 1_000)).toBe(false); // this worker's probe
    // Its hold runs out while the heartbeat keeps the lease; then another worker takes the probe.
    for (let step = 0; step < 3; step++) {
      clock.now += 500;
      const seen = renewals.length;
      await until(() => renewals.length > seen);
    }
    expect(await board.takeProbe(probed.id, clock.now, clock.now + 60_000)).toBe(true);
    for (const pending of fake.pending) pending.answer({ kind: "response", status: 200, durationMs: 1_500 });
    await until(() => worker.inFlight === 0);
    expect(fake.sentTo("probe.example")).toBe(0);
    expect((await queue.get(id as string))?.state.attempts).toBe(0);
    // The other worker's probe succeeded: closed for all, and this worker's delivery goes out as usual.
    await board.close(probed.id);
    clock.now += 1_000;
    worker.wake();
    await until(async () => (await queue.get(id as string))?.state.status === "delivered");
    expect(fake.sentTo("probe.example")).toBe(1);
    expect(await board.openUntil(probed.id)).toBeUndefined();
  });

  it("one worker's open circuit stops the others; after the cool-down exactly one probe goes out, for all of them", async () => {
    const clock = { now: T0 };
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints, now: () => clock.now });
    const failing = endpointFixture({ url: "https://failing.example/hook", enabledEvents: ["*"] });
    await endpoints.create(failing);
    let sent = 0;
    let healthy = false;
    let sentAtClose: number | undefined;
    const dispatcher = {
      dispatch: async () => {
        sent++;
        return { kind: "response", status: healthy ? 200 : 503, durationMs: 1 } as const;
      },
      close() {},
    };
    const make = () =>
      createDeliveryWorker({
        queue,
        endpoints,
        dispatcher,
        now: () => clock.now,
        circuit: { window: 4, minimumAttempts: 4, failureRatio: 1, coolDownMs: 10_000 },
        retry: scheduleBackoff(Array(50).fill(0), 0),
        endpointCacheMs: 0,
        stopGraceMs: 0,
        onEvent: (event) => {
          if (event.type === "circuit" && event.status === "closed") sentAtClose ??= sent;
        },
      });
    const workers = [make(), make(), make()];
    for (const worker of workers) cleanups.push(() => worker.stop());
    const ids = await publish(queue, "x.created", 30, T0);
    for (const worker of workers) worker.start();
    const board = queue.sharedCircuits?.();
    const settle = async (condition: () => boolean | Promise<boolean>) => {
      while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 5));
    };
    await settle(async () => (await board?.openUntil(failing.id)) !== undefined);
    await settle(() => workers.every((w) => w.inFlight === 0));
    // Open for everyone: more claims and wake-ups send nothing, from any worker.
    const whenOpened = sent;
    for (let i = 0; i < 10; i++) {
      for (const worker of workers) worker.wake();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(sent).toBe(whenOpened);
    // Past the cool-down: one probe in all three workers; it succeeds and closes the circuit for everyone.
    healthy = true;
    clock.now += 10_000;
    await settle(() => sentAtClose !== undefined);
    expect(sentAtClose).toBe(whenOpened + 1);
    // Deliveries that lost the probe to another worker were put off a second: let the (fake) clock move on.
    await settle(async () => {
      clock.now += 100;
      for (const worker of workers) worker.wake();
      const states = await Promise.all(ids.map(async (id) => (await queue.get(id))?.state.status));
      return states.every((status) => status === "delivered");
    });
    expect(await board?.openUntil(failing.id)).toBeUndefined();
  });
});
