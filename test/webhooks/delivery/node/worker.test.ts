import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { createEndpointRateLimiter, type EndpointRateLimiter } from "../../../../src/ratelimit/endpoint-limiter";
import type { AttemptInput } from "../../../../src/webhooks/delivery/attempt";
import type { ClaimedDelivery, ClaimOptions, DeliveryQueue } from "../../../../src/webhooks/delivery/delivery-queue";
import { buildDeliveryRequest } from "../../../../src/webhooks/delivery/delivery-request";
import type { WebhookEndpoint } from "../../../../src/webhooks/delivery/endpoint";
import { createEndpointAdmin } from "../../../../src/webhooks/delivery/endpoint-admin";
import { createEvent } from "../../../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../../src/webhooks/delivery/memory/index";
import { createDeliveryWorker, type DeliveryWorkerEvent } from "../../../../src/webhooks/delivery/node/index";
import { workerSettings } from "../../../../src/webhooks/delivery/node/worker-options";
import type { DeliveryState } from "../../../../src/webhooks/delivery/state-machine";
import { scheduleBackoff } from "../../../../src/webhooks/retry/backoff";
import { generateSecret } from "../../../../src/webhooks/signing/standard-keys";
import { endpointFixture } from "../store-contract";
import { fakeDispatcher } from "./fake-dispatcher";
import { localServer } from "./local-server";

type Local = Awaited<ReturnType<typeof localServer>>;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function setup(
  reply: Parameters<typeof localServer>[0],
  workerOptions: Partial<Parameters<typeof createDeliveryWorker>[0]> = {},
  endpointInput: { enabled_events?: string[]; rate_limit?: number } = {},
) {
  const server: Local = await localServer(reply);
  const endpoints = createMemoryEndpointStore();
  const queue = createMemoryDeliveryQueue({ endpoints });
  const urlPolicy = { allowHttp: true, allow: ["127.0.0.1"] };
  const admin = createEndpointAdmin({ endpoints, queue, urlPolicy, resolve: false });
  const created = await admin.create({
    url: server.url,
    enabled_events: endpointInput.enabled_events ?? ["*"],
    rate_limit: endpointInput.rate_limit,
  });
  if (!created.ok) throw new Error("setup failed");
  const events: DeliveryWorkerEvent[] = [];
  const worker = createDeliveryWorker({
    queue,
    endpoints,
    dispatcher: { urlPolicy, timeoutMs: 10_000 },
    retry: scheduleBackoff([0, 5, 5, 5], 0),
    endpointCacheMs: 0,
    onEvent: (e) => events.push(e),
    ...workerOptions,
  });
  cleanups.push(async () => {
    await worker.stop();
    await server.close();
  });
  worker.start();
  return { server, endpoints, queue, admin, worker, events, endpoint: created.value };
}

describe("delivery worker options", () => {
  const endpoints = createMemoryEndpointStore();
  const queue = createMemoryDeliveryQueue({ endpoints });
  const make = (options: object) => () => createDeliveryWorker({ queue, endpoints, ...options });

  it("refuses a lease too short to renew and a stop grace beyond the time-out, naming the option (issue 15)", () => {
    expect(make({ leaseMs: 500 })).toThrow(/leaseMs must be at least 1000/);
    // A lease shorter than the time-out works: it is renewed while the attempt runs.
    expect(make({ leaseMs: 1_000, dispatcher: { timeoutMs: 5_000 } })).not.toThrow();
    expect(make({ stopGraceMs: 6_000, dispatcher: { timeoutMs: 5_000 } })).toThrow(
      /stopGraceMs \(6000\) must not be longer than dispatcher.timeoutMs \(5000\)/,
    );
    expect(make({ stopGraceMs: 20_000 })).toThrow(/dispatcher.timeoutMs \(15000\)/); // the default time-out
    expect(make({ stopGraceMs: -1 })).toThrow(/stopGraceMs must be 0 or more/);
  });

  it("refuses zero, negative or fractional concurrency and non-positive intervals, naming the option", () => {
    expect(make({ concurrency: 0 })).toThrow(/concurrency must be a positive integer/);
    expect(make({ endpointConcurrency: -1 })).toThrow(/endpointConcurrency/);
    expect(make({ concurrency: 1.5 })).toThrow(/concurrency/);
    expect(make({ pollIntervalMs: 0 })).toThrow(/pollIntervalMs/);
    expect(() => createDeliveryWorker({ endpoints } as never)).toThrow(/options.queue is required/);
  });

  // The wording of src/options/number-option.ts, which checks these options.
  it.each([
    [{ concurrency: 1.5 }, "createDeliveryWorker: concurrency must be a positive integer, got 1.5."],
    [{ endpointConcurrency: 0 }, "createDeliveryWorker: endpointConcurrency must be a positive integer, got 0."],
    [{ leaseMs: Number.NaN }, "createDeliveryWorker: leaseMs must be a positive number of milliseconds, got NaN."],
    [{ pollIntervalMs: -1 }, "createDeliveryWorker: pollIntervalMs must be a positive number of milliseconds, got -1."],
    [
      { disableAfterMs: Number.NaN },
      "createDeliveryWorker: disableAfterMs must be a positive number of milliseconds, got NaN.",
    ],
    [
      { dispatcher: { timeoutMs: 0 } },
      "createDeliveryWorker: dispatcher.timeoutMs must be a positive number of milliseconds, got 0.",
    ],
  ])("refuses %j in the options' common wording", (options, message) => {
    expect(make(options)).toThrow(new TypeError(message));
  });

  it("takes disableAfterMs Infinity (never disabled) and leaves out what is not given", () => {
    expect(make({ disableAfterMs: Number.POSITIVE_INFINITY })).not.toThrow();
    expect(make({ concurrency: undefined, leaseMs: undefined, dispatcher: { timeoutMs: undefined } })).not.toThrow();
  });

  // Regression: a window past 32 (the bit mask's width) never opened once it was full (at most 32 failures counted
  // against 80 % of the window), and a cool-down given as undefined replaced the default, so an open circuit never let
  // a probe through (retryAt NaN): the endpoint's deliveries were held for good.
  it("refuses circuit settings the breaker cannot work with, naming the setting; undefined means the default", () => {
    for (const [circuit, message] of [
      [{ window: 33 }, /circuit.window must be at most 32/],
      [{ window: 0 }, /circuit.window/],
      [{ window: 4, minimumAttempts: 5 }, /circuit.minimumAttempts \(5\) must not be more than circuit.window \(4\)/],
      [{ failureRatio: 0 }, /circuit.failureRatio/],
      [{ failureRatio: Number.NaN }, /circuit.failureRatio/],
      [{ failureRatio: 1.5 }, /circuit.failureRatio/],
      [{ coolDownMs: -1 }, /circuit.coolDownMs/],
      [{ coolDownMs: Number.NaN }, /circuit.coolDownMs/],
    ] as const) {
      expect(make({ circuit }), JSON.stringify(circuit)).toThrow(TypeError);
      expect(make({ circuit }), JSON.stringify(circuit)).toThrow(message);
    }
    expect(
      make({ circuit: { coolDownMs: undefined, window: 32, minimumAttempts: 32, failureRatio: 1 } }),
    ).not.toThrow();
    expect(make({ circuit: false })).not.toThrow();
    expect(workerSettings({ queue, endpoints, circuit: { coolDownMs: undefined } }).circuit?.coolDownMs).toBe(30_000);
  });

  // Regression: a clock, listener or resolver that is no function was taken, and every claim or attempt failed (a
  // resolver: each attempt an error, retried until exhausted), or no event was ever told.
  it("refuses a function option that is no function, naming it, the dispatcher's too", () => {
    for (const name of ["now", "random", "onEvent", "retryable"]) {
      expect(make({ [name]: 42 }), name).toThrow(TypeError);
      expect(make({ [name]: "x" }), name).toThrow(new RegExp(`createDeliveryWorker: ${name} must be a function`));
    }
    for (const name of ["resolve", "now"]) {
      expect(make({ dispatcher: { [name]: "8.8.8.8" } }), name).toThrow(TypeError);
      expect(make({ dispatcher: { [name]: {} } }), name).toThrow(
        new RegExp(`createDispatcher: ${name} must be a function`),
      );
    }
    expect(
      make({ now: () => 0, random: () => 0.5, onEvent: () => {}, dispatcher: { resolve: async () => [] } }),
    ).not.toThrow();
  });

  it("refuses a userAgent that is not a valid header value, naming the option (regression: every attempt threw, forever, with attempts 0)", () => {
    for (const userAgent of [
      "shop/1.0\r\nx-injected: 1",
      "a\nb",
      "nul\u0000",
      " padded",
      "padded\t",
      "",
      "\u20ac",
      42,
    ]) {
      expect(make({ userAgent }), JSON.stringify(userAgent)).toThrow(TypeError);
      expect(make({ userAgent }), JSON.stringify(userAgent)).toThrow(/createDeliveryWorker: userAgent must be/);
    }
    for (const userAgent of ["shop/1.0 (+https://shop.example)", "a\tb", "caf\u00e9/1"]) {
      expect(make({ userAgent }), userAgent).not.toThrow();
    }
  });
});

describe("delivery worker", () => {
  it("sends the publisher's traceparent only with propagateTraceContext (issue 23)", async () => {
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    for (const propagate of [false, true]) {
      const { server, queue, worker } = await setup((_req, res) => res.end("ok"), { propagateTraceContext: propagate });
      await queue.publish(createEvent({ type: "order.created", data: {} }), { traceparent });
      await worker.drained();
      expect(server.received[0]?.headers.traceparent).toBe(propagate ? traceparent : undefined);
    }
  });

  it("tells the listener where each attempt went: scheme, host and port, not the path", async () => {
    const { server, queue, worker, events } = await setup((_req, res) => res.end("ok"));
    await queue.publish(createEvent({ type: "order.created", data: {} }));
    await worker.drained();
    const port = Number(new URL(server.url).port);
    const attempts = events.filter((e) => e.type === "attempt");
    expect(attempts).toHaveLength(1);
    expect(attempts[0]?.target).toStrictEqual({ scheme: "http", host: "127.0.0.1", port });
  });

  // Regression: undici refuses a header value with CR, LF or NUL, so a value stored by hand failed every attempt with a
  // TypeError, attempts never counted, and the delivery was claimed again after each lease, for ever.
  it("delivers to an endpoint whose stored headers hold a value the HTTP client refuses, without that field", async () => {
    const { server, queue, worker, endpoints, endpoint, events } = await setup((_req, res) => res.end("ok"));
    await endpoints.update(endpoint.id, { headers: { "x-key": "k\r\nx-injected: 1", "x-other": "fine" } });
    const { deliveryIds } = await queue.publish(createEvent({ type: "order.created", data: {} }));
    await worker.drained();
    expect(events.filter((e) => e.type === "error")).toEqual([]);
    expect((await queue.get(deliveryIds[0]!))?.state).toMatchObject({ status: "delivered", attempts: 1 });
    expect(server.received[0]?.headers["x-key"]).toBeUndefined();
    expect(server.received[0]?.headers["x-injected"]).toBeUndefined();
    expect(server.received[0]?.headers["x-other"]).toBe("fine");
  });

  it("retries failures until a 2xx: same webhook-id, fresh signature each time, verified by standardwebhooks", async () => {
    const { server, queue, worker, endpoint } = await setup((_req, res, i) => {
      res.statusCode = i < 2 ? 500 : 200;
      res.end(i < 2 ? "nope" : "ok");
    });
    const event = createEvent({ type: "order.created", data: { id: "ord_1" } });
    const { deliveryIds } = await queue.publish(event);
    await worker.drained();
    expect(server.received).toHaveLength(3);
    const verifier = new Webhook(endpoint.secrets[0]!.secret);
    for (const r of server.received) {
      expect(r.headers["webhook-id"]).toBe(event.id);
      expect(verifier.verify(r.body, r.headers as Record<string, string>)).toEqual(event);
    }
    const delivery = await queue.get(deliveryIds[0]!);
    expect(delivery?.state).toMatchObject({ status: "delivered", attempts: 3 });
    const log = await queue.attempts({ endpointId: endpoint.id });
    expect(log.map((a) => [a.attempt, a.status, a.errorKind])).toEqual([
      [3, 200, null],
      [2, 500, "http_status"],
      [1, 500, "http_status"],
    ]);
    expect(log[2]?.response).toBe("nope");
  });

  it("exhausts after the last attempt and reports it", async () => {
    const { server, queue, worker, events } = await setup((_req, res) => res.writeHead(503).end());
    const { deliveryIds } = await queue.publish(createEvent({ type: "order.created", data: {} }));
    await worker.drained();
    expect(server.received).toHaveLength(4);
    expect((await queue.get(deliveryIds[0]!))?.state.status).toBe("exhausted");
    expect(events.some((e) => e.type === "delivery.exhausted")).toBe(true);
  });

  it("a 410 Gone disables the endpoint and tells the owner", async () => {
    const { server, queue, worker, events, endpoints, endpoint } = await setup((_req, res) => res.writeHead(410).end());
    await queue.publish(createEvent({ type: "order.created", data: {} }));
    await worker.drained();
    expect(server.received).toHaveLength(1);
    expect(await endpoints.get(endpoint.id)).toMatchObject({ status: "disabled", disabledReason: "gone" });
    expect(events).toContainEqual({ type: "endpoint.disabled", endpointId: endpoint.id, reason: "gone" });
    // Later events are not sent to a disabled endpoint.
    expect((await queue.publish(createEvent({ type: "order.created", data: {} }))).deliveryIds).toEqual([]);
  });

  it("sends nothing after a 410 Gone, though the next delivery was claimed and signed ahead (concurrency 1)", async () => {
    const { server, queue, worker, endpoint } = await setup((_req, res) => res.writeHead(410).end(), {
      concurrency: 1,
      endpointCacheMs: 60_000,
    });
    for (let i = 0; i < 5; i++) await queue.publish(createEvent({ type: "order.created", data: { i } }));
    await worker.drained();
    expect(server.received).toHaveLength(1);
    const deliveries = await queue.list(endpoint.id);
    expect(deliveries.map((d) => d.state.status)).toEqual(Array(5).fill("exhausted"));
    expect(deliveries.filter((d) => d.state.lastErrorKind === "endpoint_disabled")).toHaveLength(4);
  });

  // Regression: a URL the policy refuses by itself (here a port, after `ports` was tightened) was logged as
  // ssrf_blocked and retried on the whole schedule, then disabled as `failing` days later.
  it("an endpoint whose URL the policy now refuses is disabled url_refused at once; re-enabling after the fix delivers", async () => {
    const server: Local = await localServer((_req, res) => res.end("ok"));
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints });
    const urlPolicy = { allowHttp: true, allow: ["127.0.0.1"] };
    const admin = createEndpointAdmin({ endpoints, queue, urlPolicy, resolve: false });
    const created = await admin.create({ url: server.url, enabled_events: ["*"] });
    if (!created.ok) throw new Error("setup failed");
    const endpoint = created.value;
    const deliveryIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      deliveryIds.push(...(await queue.publish(createEvent({ type: "order.created", data: { i } }))).deliveryIds);
    }
    const events: DeliveryWorkerEvent[] = [];
    const workerWith = (policy: typeof urlPolicy & { ports?: number[] }) => {
      const worker = createDeliveryWorker({
        queue,
        endpoints,
        dispatcher: { urlPolicy: policy, timeoutMs: 10_000 },
        retry: scheduleBackoff([0, 5, 5, 5], 0),
        concurrency: 1,
        endpointCacheMs: 0,
        onEvent: (e) => events.push(e),
      });
      cleanups.push(() => worker.stop());
      worker.start();
      return worker;
    };
    cleanups.push(() => server.close());

    const tightened = workerWith({ ...urlPolicy, ports: [443] });
    await tightened.drained();
    await tightened.stop();
    expect(server.received).toHaveLength(0);
    expect(await endpoints.get(endpoint.id)).toMatchObject({ status: "disabled", disabledReason: "url_refused" });
    expect(events).toContainEqual({ type: "endpoint.disabled", endpointId: endpoint.id, reason: "url_refused" });
    const parked = await Promise.all(deliveryIds.map(async (id) => (await queue.get(id))?.state));
    expect(parked.map((state) => [state?.status, state?.lastErrorKind])).toEqual([
      ["exhausted", "endpoint_disabled"],
      ["exhausted", "endpoint_disabled"],
    ]);
    expect(parked.map((state) => state?.attempts).sort()).toEqual([0, 1]);
    const log = await queue.attempts({ endpointId: endpoint.id });
    expect(log.map((line) => [line.attempt, line.status, line.errorKind])).toEqual([[1, null, "url_refused"]]);

    const fixed = workerWith(urlPolicy);
    expect((await admin.update(endpoint.id, { status: "enabled" })).ok).toBe(true);
    fixed.wake();
    await fixed.drained();
    expect(server.received).toHaveLength(2);
    for (const id of deliveryIds) expect((await queue.get(id))?.state.status).toBe("delivered");
  });

  it("stop() hands deliveries signed ahead back to the queue, due at once, no attempt used", async () => {
    let hold = true;
    let answer: (() => void) | undefined;
    const { server, queue, worker, endpoint, endpoints, admin } = await setup(
      (_req, res) => {
        if (hold) answer = () => res.end("ok");
        else res.end("ok");
      },
      { concurrency: 1, endpointCacheMs: 60_000 },
    );
    // Three endpoints (each starts with one delivery at a time), one slot: one request goes out, two wait for the slot.
    const more = [
      await admin.create({ url: server.url, enabled_events: ["*"] }),
      await admin.create({ url: server.url, enabled_events: ["*"] }),
    ];
    await queue.publish(createEvent({ type: "order.created", data: { i: 0 } }));
    while (answer === undefined) await new Promise((r) => setTimeout(r, 2));
    while (worker.inFlight < 3) await new Promise((r) => setTimeout(r, 2));
    expect(worker.inFlight).toBe(3);
    const stopped = worker.stop();
    hold = false;
    answer();
    await stopped;
    expect(worker.inFlight).toBe(0);
    expect(server.received).toHaveLength(1);
    const ids = [endpoint.id, ...more.map((m) => (m.ok ? m.value.id : ""))];
    const all = async () => (await Promise.all(ids.map((id) => queue.list(id)))).flat();
    const states = (await all()).map((d) => d.state);
    expect(states.filter((s) => s.status === "delivered")).toHaveLength(1);
    const waiting = states.filter((s) => s.status === "pending");
    expect(waiting).toHaveLength(2);
    expect(waiting.every((s) => s.attempts === 0 && (s.nextAttemptAt ?? Infinity) <= Date.now())).toBe(true);
    // Another worker takes them over at once.
    const next = createDeliveryWorker({
      queue,
      endpoints,
      dispatcher: { urlPolicy: { allowHttp: true, allow: ["127.0.0.1"] }, timeoutMs: 10_000 },
    });
    cleanups.push(() => next.stop());
    next.start();
    await next.drained();
    expect(server.received).toHaveLength(3);
    expect((await all()).every((d) => d.state.status === "delivered")).toBe(true);
  });

  it("a delivery a stopping worker hands back goes at once to another worker on the queue, asleep till the lease's end", async () => {
    const fake = fakeDispatcher((host) => host === "stuck.example");
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints });
    const endpoint = endpointFixture({ url: "https://stuck.example/in" });
    await endpoints.create(endpoint);
    // Its lease would end in ten minutes: the other worker's timer waits for that.
    const stopping = createDeliveryWorker({
      queue,
      endpoints,
      dispatcher: fake.dispatcher,
      stopGraceMs: 0,
      leaseMs: 600_000,
    });
    stopping.start();
    const { deliveryIds } = await queue.publish(createEvent({ type: "order.created", data: {} }));
    while (fake.pending.size === 0) await new Promise((r) => setTimeout(r, 2));
    // The other worker finds nothing due, and sleeps for an hour or till the lease ends.
    const answered = fakeDispatcher();
    const other = createDeliveryWorker({
      queue,
      endpoints,
      dispatcher: answered.dispatcher,
      pollIntervalMs: 3_600_000,
    });
    cleanups.push(() => other.stop());
    other.start();
    await new Promise((r) => setTimeout(r, 20));
    expect(answered.sent).toHaveLength(0);
    await stopping.stop();
    // Not a time: told of the hand-back, it delivers; were it not, the test's time-out would fail it.
    while ((await queue.get(deliveryIds[0] as string))?.state.status !== "delivered") {
      await new Promise((r) => setTimeout(r, 2));
    }
    expect(answered.sent).toHaveLength(1);
    expect((await queue.get(deliveryIds[0] as string))?.state.attempts).toBe(1);
  });

  it("delivers again after stop() then start(), on a dispatcher of its own (regression: 'The client is destroyed' counted as failed attempts)", async () => {
    const { server, queue, worker, events } = await setup((_req, res) => res.end("ok"));
    const [first] = (await queue.publish(createEvent({ type: "order.created", data: { n: 1 } }))).deliveryIds;
    await worker.drained();
    await worker.stop();
    worker.start();
    const [second] = (await queue.publish(createEvent({ type: "order.created", data: { n: 2 } }))).deliveryIds;
    await worker.drained();
    // Restarted before the stop is over: it starts again once the stop is done.
    const stopped = worker.stop();
    worker.start();
    await stopped;
    const [third] = (await queue.publish(createEvent({ type: "order.created", data: { n: 3 } }))).deliveryIds;
    await worker.drained();
    for (const id of [first, second, third]) {
      expect((await queue.get(id!))?.state).toMatchObject({ status: "delivered", attempts: 1 });
    }
    expect(server.received).toHaveLength(3);
    expect(
      events.filter((e) => e.type === "attempt").map((e) => (e.type === "attempt" ? e.attempt.status : 0)),
    ).toEqual([200, 200, 200]);
  });

  it("never closes a dispatcher passed in, and restarts on it", async () => {
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints });
    const admin = createEndpointAdmin({ endpoints, queue, resolve: false });
    expect((await admin.create({ url: "https://hooks.example.com/in", enabled_events: ["*"] })).ok).toBe(true);
    const fake = fakeDispatcher();
    const worker = createDeliveryWorker({ queue, endpoints, dispatcher: fake.dispatcher });
    cleanups.push(() => worker.stop());
    for (let round = 0; round < 2; round++) {
      worker.start();
      await queue.publish(createEvent({ type: "order.created", data: { round } }));
      await worker.drained();
      await worker.stop();
      expect(fake.closed()).toBe(false);
    }
    expect(fake.sent).toHaveLength(2);
  });

  // Regression: a queue of one's own whose `complete` throws (rather than rejects) while the worker handed back a
  // claim it had no room for gave an unhandled rejection, and stop() waited for that hand-back for ever.
  it("a queue that throws, not rejects, on a hand-back is reported, and stop() still ends", async () => {
    const endpoints = createMemoryEndpointStore();
    const inner = createMemoryDeliveryQueue({ endpoints });
    const admin = createEndpointAdmin({
      endpoints,
      queue: inner,
      urlPolicy: { allowHttp: true, allow: ["127.0.0.1"] },
      resolve: false,
    });
    await admin.create({ url: "http://127.0.0.1:9/hooks", enabled_events: ["*"] });
    const queue: DeliveryQueue = Object.assign(Object.create(inner) as DeliveryQueue, {
      // Serves more of one endpoint than the worker has room for: the rest is handed back at once.
      claim: (options: ClaimOptions) => inner.claim({ ...options, perEndpoint: 100, endpointLimits: undefined }),
      complete: (claim: ClaimedDelivery, state: DeliveryState, attempt?: AttemptInput) => {
        if (attempt === undefined) throw new Error("queue down");
        return inner.complete(claim, state, attempt);
      },
    });
    for (let i = 0; i < 6; i++) await inner.publish(createEvent({ type: "order.created", data: { i } }));
    const { dispatcher } = fakeDispatcher();
    const events: DeliveryWorkerEvent[] = [];
    const worker = createDeliveryWorker({ queue, endpoints, dispatcher, onEvent: (e) => events.push(e) });
    worker.start();
    while (!events.some((e) => e.type === "error")) await new Promise((r) => setTimeout(r, 2));
    await worker.stop();
    expect(events.filter((e) => e.type === "error").map((e) => (e as { error: Error }).error.message)).toContain(
      "queue down",
    );
  });

  // Regression: past 2^31 - 1 ms a Node timer fires after 1 ms, so a stop grace that long aborted the attempts at once.
  it("stop() gives attempts in flight a grace longer than a timer can wait, not none", async () => {
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints });
    const admin = createEndpointAdmin({
      endpoints,
      queue,
      urlPolicy: { allowHttp: true, allow: ["127.0.0.1"] },
      resolve: false,
    });
    await admin.create({ url: "http://127.0.0.1:9/hooks", enabled_events: ["*"] });
    const { dispatcher, pending } = fakeDispatcher(() => true);
    const worker = createDeliveryWorker({ queue, endpoints, dispatcher, stopGraceMs: 3e9 });
    const { deliveryIds } = await queue.publish(createEvent({ type: "order.created", data: {} }));
    worker.start();
    while (pending.size === 0) await new Promise((r) => setTimeout(r, 2));
    const stopped = worker.stop();
    await new Promise((r) => setTimeout(r, 30));
    const [inFlight] = [...pending];
    expect(inFlight?.signal?.aborted).toBe(false);
    inFlight?.answer({ kind: "response", status: 200, durationMs: 1 });
    await stopped;
    expect((await queue.get(deliveryIds[0]!))?.state.status).toBe("delivered");
  });

  it("a retry policy that throws is reported as an error; the worker lets go of the delivery", async () => {
    const bug = new Error("policy bug");
    const { server, queue, worker, events } = await setup((_req, res) => res.writeHead(500).end(), {
      retry: () => {
        throw bug;
      },
    });
    await queue.publish(createEvent({ type: "order.created", data: {} }));
    while (!events.some((e) => e.type === "error")) await new Promise((r) => setTimeout(r, 2));
    while (worker.inFlight > 0) await new Promise((r) => setTimeout(r, 2));
    expect(server.received).toHaveLength(1);
    expect(events).toContainEqual({ type: "error", error: bug });
  });

  it("disables an endpoint that fails for the whole period without a success; re-enabling resumes delivery", async () => {
    let healthy = false;
    const { server, queue, worker, events, admin, endpoint } = await setup(
      (_req, res) => res.writeHead(healthy ? 200 : 500).end(),
      { disableAfterMs: 1, retry: scheduleBackoff([0, 20, 20, 20, 20, 20], 0) },
    );
    const { deliveryIds } = await queue.publish(createEvent({ type: "order.created", data: {} }));
    await worker.drained();
    expect(events).toContainEqual({ type: "endpoint.disabled", endpointId: endpoint.id, reason: "failing" });
    expect((await queue.get(deliveryIds[0]!))?.state).toMatchObject({
      status: "exhausted",
      lastErrorKind: "endpoint_disabled",
    });
    const sent = server.received.length;
    healthy = true;
    const enabled = await admin.update(endpoint.id, { status: "enabled" });
    expect(enabled.ok).toBe(true);
    worker.wake();
    await worker.drained();
    expect(server.received.length).toBe(sent + 1);
    expect((await queue.get(deliveryIds[0]!))?.state.status).toBe("delivered");
  });

  it("the circuit breaker stops hammering a failing endpoint", async () => {
    const { server, queue, worker, endpoint } = await setup((_req, res) => res.writeHead(500).end(), {
      circuit: { window: 4, minimumAttempts: 3, failureRatio: 0.75, coolDownMs: 60_000 },
      concurrency: 1,
      retry: scheduleBackoff([0, 60_000], 0),
    });
    for (let i = 0; i < 10; i++) await queue.publish(createEvent({ type: "order.created", data: { i } }));
    // Wait until every delivery has been handled once: nothing is due within the next 30 s.
    while (worker.inFlight > 0 || ((await queue.nextDueAt()) ?? 0) < Date.now() + 30_000) {
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(server.received).toHaveLength(3);
    const scheduled = await queue.list(endpoint.id);
    expect(scheduled.filter((d) => d.state.status === "pending")).toHaveLength(7);
    expect(scheduled.every((d) => d.state.attempts <= 1)).toBe(true);
  });

  it("keeps to the per-endpoint concurrency limit", async () => {
    const { server, queue, worker } = await setup((_req, res) => setTimeout(() => res.end("ok"), 15), {
      concurrency: 16,
      endpointConcurrency: 2,
    });
    for (let i = 0; i < 20; i++) await queue.publish(createEvent({ type: "order.created", data: { i } }));
    await worker.drained();
    expect(server.received).toHaveLength(20);
    expect(server.maxActive()).toBeLessThanOrEqual(2);
  });

  it("keeps to the global concurrency limit across endpoints", async () => {
    const { server, queue, worker, admin } = await setup((_req, res) => setTimeout(() => res.end("ok"), 30), {
      concurrency: 2,
      endpointConcurrency: 16,
    });
    // Two more endpoints on the same consumer: the per-endpoint limit alone would let 48 through.
    for (let i = 0; i < 2; i++) {
      const more = await admin.create({ url: server.url, enabled_events: ["*"] });
      expect(more.ok).toBe(true);
    }
    let published = 0;
    for (let i = 0; i < 8; i++)
      published += (await queue.publish(createEvent({ type: "order.created", data: { i } }))).deliveryIds.length;
    expect(published).toBe(24);
    await worker.drained();
    expect(server.received).toHaveLength(24);
    expect(server.maxActive()).toBe(2);
  });

  it("paces an endpoint with the real GCRA rate limiter on a fake clock (deferrals use no attempt)", async () => {
    const T0 = 1_700_000_000_000;
    let now = T0;
    const sentAt: number[] = [];
    const { server, queue, worker, endpoint } = await setup(
      (_req, res) => {
        sentAt.push(now);
        res.end("ok");
      },
      { now: () => now, rateLimiter: createEndpointRateLimiter() },
      { rate_limit: 2 },
    );
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(...(await queue.publish(createEvent({ type: "order.created", data: { i } }), { now })).deliveryIds);
    }
    // Step the clock 100 ms at a time, each step once the worker has done all it can at that time.
    const quiet = async () => {
      while (worker.inFlight > 0 || ((await queue.nextDueAt()) ?? Number.POSITIVE_INFINITY) <= now) {
        await new Promise((r) => setTimeout(r, 2));
      }
    };
    for (let step = 0; step < 40 && server.received.length < 4; step++) {
      await quiet();
      now += 100;
      worker.wake();
    }
    await quiet();
    expect(server.received).toHaveLength(4);
    // 2 per second, burst 1: one delivery every 500 ms of the (fake) clock, the first at once.
    expect(sentAt[0]).toBe(T0);
    for (let i = 1; i < sentAt.length; i++) expect(sentAt[i]! - sentAt[i - 1]!).toBeGreaterThanOrEqual(500);
    expect(sentAt[3]).toBeLessThanOrEqual(T0 + 1_500 + 100);
    const states = await Promise.all(ids.map(async (id) => (await queue.get(id))?.state));
    expect(states.every((state) => state?.status === "delivered" && state.attempts === 1)).toBe(true);
    expect((await queue.attempts({ endpointId: endpoint.id })).length).toBe(4);
  });

  it("asks the rate limiter for endpoints that set a rate, and defers when refused", async () => {
    const calls: number[] = [];
    const limiter: EndpointRateLimiter = {
      async acquire(_id, perSecond, nowMs) {
        calls.push(perSecond);
        return calls.length % 2 === 1 ? { allowed: false, retryAtMs: nowMs + 5 } : { allowed: true };
      },
    };
    const { server, queue, worker } = await setup(
      (_req, res) => res.end("ok"),
      { rateLimiter: limiter },
      { rate_limit: 3 },
    );
    for (let i = 0; i < 4; i++) await queue.publish(createEvent({ type: "order.created", data: { i } }));
    await worker.drained();
    expect(server.received).toHaveLength(4);
    expect(calls.length).toBeGreaterThanOrEqual(8);
    expect(new Set(calls)).toEqual(new Set([3]));
  });

  it("signs with both secrets during a rotation's grace period", async () => {
    const { server, queue, worker, admin, endpoint } = await setup((_req, res) => res.end("ok"));
    const rotated = await admin.rotateSecret(endpoint.id);
    if (!rotated.ok) throw new Error("rotation failed");
    await queue.publish(createEvent({ type: "order.created", data: {} }));
    await worker.drained();
    const [received] = server.received;
    expect(String(received?.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    for (const { secret } of rotated.value.secrets) {
      expect(() =>
        new Webhook(secret).verify(received!.body, received!.headers as Record<string, string>),
      ).not.toThrow();
    }
  });
});

describe("delivery worker: a request that cannot be built", () => {
  const T0 = 1_700_000_000_000;
  const row = (id: string, url: string, secrets: WebhookEndpoint["secrets"], enabledEvents = ["*"]): WebhookEndpoint =>
    endpointFixture({ id, url, secrets, enabledEvents, createdAt: T0 });

  // Regression: buildDeliveryRequest's throw (every secret of a row written by hand expired, or none a signing key)
  // was only reported as an `error` event; the lease brought the delivery back, to be claimed again at every lease
  // end for ever, with no attempt counted or logged.
  it("counts a request_invalid attempt per claim, logged, on the retry schedule, until exhausted; others still go out", async () => {
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints });
    const good = generateSecret();
    const bad = [
      row("ep_expired", "http://expired.test/h", [{ secret: good, expiresAt: T0 - 1 }], ["order.created"]),
      row(
        "ep_literal",
        "http://literal.test/h",
        [
          { secret: good, expiresAt: T0 - 1 },
          { secret: "not-a-signing-key", expiresAt: null },
        ],
        ["order.created"],
      ),
    ];
    for (const endpoint of [...bad, row("ep_good", "http://good.test/h", [{ secret: good, expiresAt: null }])]) {
      await endpoints.create(endpoint);
    }
    let now = T0;
    const fake = fakeDispatcher();
    const events: DeliveryWorkerEvent[] = [];
    const worker = createDeliveryWorker({
      queue,
      endpoints,
      dispatcher: fake.dispatcher,
      now: () => now,
      retry: scheduleBackoff([0, 5_000, 60_000], 0),
      endpointCacheMs: 0,
      onEvent: (e) => events.push(e),
    });
    cleanups.push(() => worker.stop());
    const { deliveryIds } = await queue.publish(createEvent({ type: "order.created", data: {} }), { now });
    worker.start();
    const quiet = async () => {
      while (worker.inFlight > 0 || ((await queue.nextDueAt()) ?? Number.POSITIVE_INFINITY) <= now) {
        await new Promise((r) => setTimeout(r, 2));
      }
    };
    const first = async () => (await Promise.all(deliveryIds.map((d) => queue.get(d)))).filter((d) => d !== undefined);
    // To each due time in turn; an event published at each step must reach the good endpoint meanwhile.
    for (let step = 0; step < 40; step++) {
      await quiet();
      await queue.publish(createEvent({ type: "order.updated", data: { step } }), { now });
      await quiet();
      expect(fake.sentTo("good.test"), `step ${step}`).toBe(step + 2);
      if ((await first()).every((d) => d.state.status === "delivered" || d.state.status === "exhausted")) break;
      now = Math.max(now, (await queue.nextDueAt()) ?? now);
      worker.wake();
    }
    expect(events.filter((e) => e.type === "error")).toEqual([]);
    expect(fake.sentTo("expired.test") + fake.sentTo("literal.test")).toBe(0);
    for (const endpoint of bad) {
      const delivery = (await first()).find((d) => d?.endpointId === endpoint.id);
      expect(delivery?.state).toMatchObject({ status: "exhausted", attempts: 3, lastErrorKind: "request_invalid" });
      const log = (await queue.attempts({ endpointId: endpoint.id })).filter((a) => a.deliveryId === delivery?.id);
      // One line per claim, at the schedule's times (0, then 5 s, then 60 s later), none with a status or a body.
      expect(log.map((a) => [a.attempt, a.startedAt, a.errorKind, a.status])).toEqual(
        [
          [1, T0, "request_invalid", null],
          [2, T0 + 5_000, "request_invalid", null],
          [3, T0 + 65_000, "request_invalid", null],
        ].reverse(),
      );
      // The log line's text is the error buildDeliveryRequest throws.
      let thrown: unknown;
      try {
        buildDeliveryRequest(delivery!, endpoint, T0);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(TypeError);
      for (const line of log) expect(line.response).toBe((thrown as Error).message);
      expect(events).toContainEqual(
        expect.objectContaining({
          type: "delivery.exhausted",
          delivery: expect.objectContaining({ id: delivery?.id }),
        }),
      );
    }
  });

  // The same, signed while it waits for a slot (concurrency 1): that throw left the endpoint's turn taken for good.
  it("counts it too when the delivery is signed ahead while another attempt is out (concurrency 1)", async () => {
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints });
    const good = generateSecret();
    await endpoints.create(row("ep_expired", "http://expired.test/h", [{ secret: good, expiresAt: T0 - 1 }]));
    await endpoints.create(row("ep_good", "http://good.test/h", [{ secret: good, expiresAt: null }]));
    const fake = fakeDispatcher();
    const events: DeliveryWorkerEvent[] = [];
    const worker = createDeliveryWorker({
      queue,
      endpoints,
      dispatcher: fake.dispatcher,
      now: () => T0,
      concurrency: 1,
      retry: scheduleBackoff([0], 0),
      onEvent: (e) => events.push(e),
    });
    cleanups.push(() => worker.stop());
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      ids.push(...(await queue.publish(createEvent({ type: "order.created", data: { i } }), { now: T0 })).deliveryIds);
    }
    worker.start();
    await worker.drained();
    expect(events.filter((e) => e.type === "error")).toEqual([]);
    expect(fake.sentTo("good.test")).toBe(6);
    const states = (await Promise.all(ids.map((id) => queue.get(id)))).filter((d) => d?.endpointId === "ep_expired");
    expect(states.map((d) => [d?.state.status, d?.state.attempts, d?.state.lastErrorKind])).toEqual(
      Array.from({ length: 6 }, () => ["exhausted", 1, "request_invalid"]),
    );
  });
});

describe("delivery worker: a dispatcher that throws or rejects", () => {
  const T0 = 1_700_000_000_000;
  // Regression: a dispatch that threw (a dispatcher of one's own) or rejected (the built-in one, for a request it
  // cannot frame) was reported and left to the lease: the delivery was claimed and sent again every leaseMs, for ever,
  // with no attempt counted, logged or retried on the schedule. It is now an attempt that failed, as request_invalid.
  for (const how of ["throws", "rejects"] as const) {
    it(`counts a dispatch that ${how} as a failed attempt, on the retry schedule, until exhausted`, async () => {
      const endpoints = createMemoryEndpointStore();
      const queue = createMemoryDeliveryQueue({ endpoints });
      await endpoints.create(endpointFixture({ url: "https://hooks.example/in", enabledEvents: ["*"] }));
      let calls = 0;
      const dispatcher = {
        dispatch: (): Promise<never> => {
          calls++;
          const error = new TypeError("cannot frame the request");
          if (how === "throws") throw error;
          return Promise.reject(error);
        },
        close() {},
      };
      const worker = createDeliveryWorker({
        queue,
        endpoints,
        dispatcher,
        now: () => T0,
        retry: scheduleBackoff([0, 0], 0),
      });
      cleanups.push(() => worker.stop());
      const { deliveryIds } = await queue.publish(createEvent({ type: "order.created", data: {} }), { now: T0 });
      worker.start();
      await worker.drained();
      expect(calls).toBe(2);
      expect((await queue.get(deliveryIds[0] as string))?.state).toMatchObject({
        status: "exhausted",
        attempts: 2,
        lastErrorKind: "request_invalid",
      });
      const log = await queue.attempts({ endpointId: (await queue.get(deliveryIds[0] as string))?.endpointId ?? "" });
      expect(log.map((line) => line.response)).toEqual(Array(2).fill("cannot frame the request"));
    });
  }
});

describe("delivery worker: a listener that fails", () => {
  // Regression: emit() caught a listener's throw but not an async listener's rejection, which was left unhandled: on
  // Node's default (--unhandled-rejections=throw) one failed notification ended the worker's process.
  it("ignores an async onEvent's rejection as it ignores a throw: no unhandled rejection, deliveries go on", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const endpoints = createMemoryEndpointStore();
      const queue = createMemoryDeliveryQueue({ endpoints });
      await endpoints.create(endpointFixture({ url: "https://hooks.example/in", enabledEvents: ["*"] }));
      const seen: string[] = [];
      const worker = createDeliveryWorker({
        queue,
        endpoints,
        dispatcher: fakeDispatcher().dispatcher,
        onEvent: async (event) => {
          seen.push(event.type);
          throw new Error(`the notifier is down (${event.type})`);
        },
      });
      cleanups.push(() => worker.stop());
      const published = await Promise.all(
        [1, 2].map(() => queue.publish(createEvent({ type: "order.created", data: {} }))),
      );
      worker.start();
      await worker.drained();
      // Unhandled rejections are reported once the microtasks of the turn have run.
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unhandled).toEqual([]);
      expect(seen.filter((type) => type === "delivery.delivered")).toHaveLength(2);
      for (const { deliveryIds } of published) {
        expect((await queue.get(deliveryIds[0] as string))?.state.status).toBe("delivered");
      }
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});

describe("delivery worker: signing while a delivery waits for its turn", () => {
  it("sends every delivery with the timestamp of the second it is sent in, across second boundaries", async () => {
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints });
    const urlPolicy = { allowHttp: true, allow: ["127.0.0.1"] };
    const admin = createEndpointAdmin({ endpoints, queue, urlPolicy, resolve: false });
    expect((await admin.create({ url: "http://127.0.0.1:9/hooks", enabled_events: ["*"] })).ok).toBe(true);
    // The clock moves 300 ms per request sent, so deliveries signed while they wait often go out in a later second.
    let clock = 1_700_000_000_100;
    const sent: { timestamp: string | undefined; second: number }[] = [];
    const dispatcher = {
      dispatch: async (request: { headers: Record<string, string> }) => {
        sent.push({ timestamp: request.headers["webhook-timestamp"], second: Math.floor(clock / 1000) });
        clock += 300;
        return { kind: "response" as const, status: 200, durationMs: 1 };
      },
      close() {},
    };
    const worker = createDeliveryWorker({ queue, endpoints, dispatcher, concurrency: 1, now: () => clock });
    cleanups.push(() => worker.stop());
    for (let i = 0; i < 20; i++)
      await queue.publish(createEvent({ type: "order.created", data: { i } }), { now: clock });
    worker.start();
    await worker.drained();
    expect(sent).toHaveLength(20);
    for (const request of sent) expect(request.timestamp).toBe(String(request.second));
    expect(new Set(sent.map((request) => request.second)).size).toBeGreaterThan(3);
  });
});
