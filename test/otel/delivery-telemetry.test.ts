import {
  context,
  createTraceState,
  ROOT_CONTEXT,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from "@opentelemetry/api";
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import {
  ATTRIBUTES,
  deliveryTelemetry,
  METRIC_NAMES,
  observeDeliveryQueue,
  tracedPublish,
  traceWebhookReceipt,
} from "../../src/otel/index";
import { createWebhookConsumer } from "../../src/webhooks/consumer/index";
import { createMemoryInbox } from "../../src/webhooks/consumer/memory/index";
import type { AttemptResult } from "../../src/webhooks/delivery/attempt";
import type { DeliveryRequest } from "../../src/webhooks/delivery/delivery-request";
import { createEndpointAdmin } from "../../src/webhooks/delivery/endpoint-admin";
import { createEvent } from "../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../src/webhooks/delivery/memory/index";
import { createDeliveryWorker, type DeliveryWorkerEvent } from "../../src/webhooks/delivery/node/index";
import { scheduleBackoff } from "../../src/webhooks/retry/backoff";
import { otelFixture, throwingTelemetry } from "./otel-fixture";

const otel = otelFixture();
afterAll(() => otel.close());
beforeEach(() => otel.reset());

/** A dispatcher answering from a list of results, one per attempt, recording the requests. */
// A delivered attempt of a delivery published without a traceparent.
const DELIVERED_UNTRACED = {
  type: "attempt",
  delivery: {
    id: "d",
    eventId: "e",
    eventType: "t",
    endpointId: "ep",
    payload: "{}",
    createdAt: 0,
    state: {
      status: "delivered",
      attempts: 1,
      nextAttemptAt: null,
      lastAttemptAt: 1,
      lastStatus: 200,
      lastErrorKind: null,
      deliveredAt: 1,
    },
  },
  attempt: {
    deliveryId: "d",
    endpointId: "ep",
    eventId: "e",
    attempt: 1,
    startedAt: 1_000,
    durationMs: 5,
    status: 200,
    errorKind: null,
    response: null,
  },
} as const;

function scriptedDispatcher(results: AttemptResult[]) {
  const requests: DeliveryRequest[] = [];
  return {
    requests,
    dispatch: async (request: DeliveryRequest): Promise<AttemptResult> => {
      requests.push(request);
      return results[requests.length - 1] ?? { kind: "response", status: 200, durationMs: 1 };
    },
    close() {},
  };
}

async function setup(
  results: AttemptResult[],
  also: (event: DeliveryWorkerEvent) => void = () => {},
  { url = "https://receiver.example/hooks", propagateTraceContext = false } = {},
) {
  const endpoints = createMemoryEndpointStore();
  const queue = createMemoryDeliveryQueue({ endpoints });
  const admin = createEndpointAdmin({ endpoints, queue, resolve: false });
  const created = await admin.create({ url, enabled_events: ["order.*"] });
  if (!created.ok) throw new Error("endpoint not created");
  const dispatcher = scriptedDispatcher(results);
  const telemetry = deliveryTelemetry({ tracer: otel.tracer, meter: otel.meter });
  const events: DeliveryWorkerEvent[] = [];
  const worker = createDeliveryWorker({
    queue,
    endpoints,
    dispatcher,
    retry: scheduleBackoff([0, 0, 0], 0),
    endpointCacheMs: 0,
    propagateTraceContext,
    onEvent: (event) => {
      events.push(event);
      telemetry(event);
      also(event);
    },
  });
  return { queue, worker, dispatcher, events, endpoint: created.value };
}

describe("delivery telemetry", () => {
  it("a delivery that fails once then succeeds: order created → published → attempt 1 failed → attempt 2 delivered, one trace", async () => {
    const { queue, worker, endpoint, dispatcher } = await setup([
      { kind: "response", status: 503, body: "busy", durationMs: 12 },
      { kind: "response", status: 204, durationMs: 7 },
    ]);
    const publish = tracedPublish(queue, { tracer: otel.tracer });
    const event = createEvent({ type: "order.created", data: { id: "ord_1" } });
    await otel.tracer.startActiveSpan("order created", async (span) => {
      await publish(event);
      span.end();
    });
    worker.start();
    await worker.drained();
    await worker.stop();

    const spans = otel.spans();
    const byName = (name: string) => spans.filter((s) => s.name === name);
    const [order] = byName("order created");
    const [published] = byName("publish order.created");
    const attempts = byName("POST").sort(
      (a, b) => Number(a.attributes[ATTRIBUTES.attempt]) - Number(b.attributes[ATTRIBUTES.attempt]),
    );
    expect(order).toBeDefined();
    expect(published?.kind).toBe(SpanKind.PRODUCER);
    expect(attempts).toHaveLength(2);
    const traceId = order?.spanContext().traceId;
    for (const span of [published, ...attempts]) expect(span?.spanContext().traceId).toBe(traceId);
    expect(published?.parentSpanContext?.spanId).toBe(order?.spanContext().spanId);
    for (const attempt of attempts) {
      expect(attempt.kind).toBe(SpanKind.CLIENT);
      expect(attempt.parentSpanContext?.spanId).toBe(published?.spanContext().spanId);
    }
    expect(published?.attributes).toMatchObject({
      [ATTRIBUTES.messagingMessageId]: event.id,
      [ATTRIBUTES.messagingDestination]: "order.created",
      [ATTRIBUTES.messagingBatchCount]: 1,
    });
    // Published for no tenant: no tenant attribute.
    expect(published?.attributes).not.toHaveProperty(ATTRIBUTES.tenant);

    const [first, second] = attempts;
    expect(first?.attributes).toMatchObject({
      [ATTRIBUTES.endpointId]: endpoint.id,
      [ATTRIBUTES.eventType]: "order.created",
      [ATTRIBUTES.eventId]: event.id,
      [ATTRIBUTES.attempt]: 1,
      [ATTRIBUTES.httpStatus]: 503,
      [ATTRIBUTES.errorKind]: "http_status",
      [ATTRIBUTES.errorType]: "503",
      [ATTRIBUTES.outcome]: "failed",
    });
    expect(typeof first?.attributes[ATTRIBUTES.nextRetryAt]).toBe("string");
    expect(first?.status.code).toBe(SpanStatusCode.ERROR);
    // regression: resend_count was 0 on first attempts; semconv sets it only on a resend.
    expect(first?.attributes).not.toHaveProperty([ATTRIBUTES.httpResendCount]);
    expect(second?.attributes).toMatchObject({
      [ATTRIBUTES.attempt]: 2,
      [ATTRIBUTES.httpResendCount]: 1,
      [ATTRIBUTES.httpStatus]: 204,
      [ATTRIBUTES.outcome]: "delivered",
    });
    expect(second?.attributes[ATTRIBUTES.errorType]).toBeUndefined();
    expect(second?.attributes[ATTRIBUTES.nextRetryAt]).toBeUndefined();
    expect(second?.status.code).not.toBe(SpanStatusCode.ERROR);
    // The span lasts as long as the attempt did (12 ms): made after the fact from the log line.
    const [seconds, nanos] = first?.duration ?? [0, 0];
    expect(seconds * 1e3 + nanos / 1e6).toBeCloseTo(12, 3);
    // propagateTraceContext is off: the receiver is told nothing about our tracing.
    expect(dispatcher.requests.every((request) => request.headers.traceparent === undefined)).toBe(true);

    const deliveries = await otel.points(METRIC_NAMES.deliveries);
    expect(deliveries).toEqual(
      expect.arrayContaining([
        {
          attributes: {
            [ATTRIBUTES.eventType]: "order.created",
            [ATTRIBUTES.outcome]: "failed",
            [ATTRIBUTES.errorType]: "503",
          },
          value: 1,
        },
        { attributes: { [ATTRIBUTES.eventType]: "order.created", [ATTRIBUTES.outcome]: "delivered" }, value: 1 },
      ]),
    );
    expect(deliveries).toHaveLength(2);
    const durations = await otel.points(METRIC_NAMES.attemptDuration);
    expect(durations.reduce((sum, point) => sum + point.value, 0)).toBe(2);
  });

  it("regression: attempt spans carry server.address, server.port and url.scheme, never the URL's path", async () => {
    const secret = "XXXXsecretXXXX";
    const { queue, worker } = await setup([{ kind: "response", status: 503, durationMs: 1 }], () => {}, {
      url: `https://hooks.receiver.example:8443/services/T000/B000/${secret}?token=${secret}`,
    });
    await queue.publish(createEvent({ type: "order.created", data: {} }));
    worker.start();
    await worker.drained();
    await worker.stop();
    const attempts = otel.spans().filter((span) => span.name === "POST");
    // The retry is a span of its own, with the same server.
    expect(attempts).toHaveLength(2);
    for (const span of attempts) {
      expect(span.attributes).toMatchObject({
        [ATTRIBUTES.serverAddress]: "hooks.receiver.example",
        [ATTRIBUTES.serverPort]: 8443,
        [ATTRIBUTES.urlScheme]: "https",
      });
      expect(span.attributes).not.toHaveProperty(["url.full"]);
      expect(JSON.stringify(span.attributes)).not.toContain(secret);
    }
  });

  it("the default port of the scheme is the server.port of a URL without one", async () => {
    const { queue, worker } = await setup([]);
    await queue.publish(createEvent({ type: "order.created", data: {} }));
    worker.start();
    await worker.drained();
    await worker.stop();
    const [span] = otel.spans();
    expect(span?.attributes).toMatchObject({
      [ATTRIBUTES.serverAddress]: "receiver.example",
      [ATTRIBUTES.serverPort]: 443,
      [ATTRIBUTES.urlScheme]: "https",
    });
  });

  it("propagateTraceContext sends the publish span's traceparent on every attempt, as documented", async () => {
    const { queue, worker, dispatcher } = await setup([{ kind: "response", status: 503, durationMs: 1 }], () => {}, {
      propagateTraceContext: true,
    });
    await tracedPublish(queue, { tracer: otel.tracer })(createEvent({ type: "order.created", data: {} }));
    worker.start();
    await worker.drained();
    await worker.stop();
    const [published] = otel.spans().filter((span) => span.name === "publish order.created");
    const { traceId, spanId } = published?.spanContext() ?? { traceId: "", spanId: "" };
    // The receiver's span is a child of the publish span, a sibling of the attempt span: that span's id is not known
    // when the request goes out (it is made after the fact, and OpenTelemetry lets no caller choose a span's id).
    expect(dispatcher.requests.map((request) => request.headers.traceparent)).toEqual([
      `00-${traceId}-${spanId}-01`,
      `00-${traceId}-${spanId}-01`,
    ]);
  });

  it("stores the publish span's traceparent with every delivery, and a caller's own wins", async () => {
    const { queue } = await setup([]);
    const publish = tracedPublish(queue, { tracer: otel.tracer });
    const { deliveryIds } = await publish(createEvent({ type: "order.paid", data: {} }));
    const stored = await queue.get(deliveryIds[0] as string);
    const [span] = otel.spans();
    expect(stored?.traceparent).toBe(`00-${span?.spanContext().traceId}-${span?.spanContext().spanId}-01`);
    const own = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const again = await publish(createEvent({ type: "order.paid", data: {} }), { traceparent: own });
    expect((await queue.get(again.deliveryIds[0] as string))?.traceparent).toBe(own);
  });

  // Regression: the API takes upper-case hex ids as valid, and an SDK span keeps its parent's trace-id as it is; the
  // traceparent written from it was no traceparent (§3.2.2: lower-case hex), the queue refused it, and the publish
  // failed because of telemetry.
  it("a parent with upper-case hex ids: the publish goes on, the traceparent stored in lower case", async () => {
    const { queue } = await setup([]);
    const upper = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: "4BF92F3577B34DA6A3CE929D0E0E4736",
      spanId: "00F067AA0BA902B7",
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    const { deliveryIds } = await context.with(upper, () =>
      tracedPublish(queue, { tracer: otel.tracer })(createEvent({ type: "order.paid", data: {} })),
    );
    const [span] = otel.spans();
    expect((await queue.get(deliveryIds[0] as string))?.traceparent).toBe(
      `00-4bf92f3577b34da6a3ce929d0e0e4736-${span?.spanContext().spanId.toLowerCase()}-01`,
    );
  });

  // W3C Trace Context §3.3: tracestate travels beside traceparent, from the publisher's context to the receiver.
  describe("tracestate", () => {
    const TRACESTATE = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";
    // The publisher's request arrived with a tracestate: its span context carries it, as does every child span.
    const incoming = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId: "00f067aa0ba902b7",
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
      traceState: createTraceState(TRACESTATE),
    });

    it("is taken from the publishing span, stored, sent beside traceparent on every attempt, and read back by the receiver", async () => {
      const { queue, worker, dispatcher, endpoint } = await setup(
        [{ kind: "response", status: 503, durationMs: 1 }],
        () => {},
        {
          propagateTraceContext: true,
        },
      );
      const { deliveryIds } = await context.with(incoming, () =>
        tracedPublish(queue, { tracer: otel.tracer })(createEvent({ type: "order.created", data: {} })),
      );
      expect((await queue.get(deliveryIds[0] as string))?.tracestate).toBe(TRACESTATE);
      worker.start();
      await worker.drained();
      await worker.stop();
      expect(dispatcher.requests.map((request) => request.headers.tracestate)).toEqual([TRACESTATE, TRACESTATE]);
      // The attempt spans continue the publisher's trace with its vendors' entries.
      const attempts = otel.spans().filter((span) => span.kind === SpanKind.CLIENT);
      expect(attempts.map((span) => span.spanContext().traceState?.serialize())).toEqual([TRACESTATE, TRACESTATE]);
      // The receiver (rest-webhooks' own consumer, traced) continues it too.
      const consumerInbox = createMemoryInbox();
      const receive = traceWebhookReceipt(
        createWebhookConsumer({ inbox: consumerInbox, secrets: endpoint.secrets[0]?.secret ?? "", onError: () => {} }),
        { tracer: otel.tracer, meter: otel.meter },
      );
      const sent = dispatcher.requests[0] as DeliveryRequest;
      otel.reset();
      const answer = await receive({
        method: "POST",
        path: "/hooks",
        search: "",
        query: {},
        headers: sent.headers,
        body: new TextEncoder().encode(sent.body),
      });
      expect(answer.status).toBe(202);
      const [receipt] = otel.spans();
      expect(receipt?.parentSpanContext?.traceState?.serialize()).toBe(TRACESTATE);
    });

    // Regression: a span tracestate past 512 characters (TraceState.set does not check) was left out whole. §3.3.1.5:
    // "MUST truncate whole entries. Entries larger than 128 characters long SHOULD be removed first."
    it("a span tracestate over 512 characters is stored without whole members, the long ones first", async () => {
      const { queue } = await setup([]);
      const [a, b, c] = [`a=${"x".repeat(253)}`, `b=${"y".repeat(198)}`, `c=${"z".repeat(60)}`];
      const grown = createTraceState(TRACESTATE).set("c", c.slice(2)).set("b", b.slice(2)).set("a", a.slice(2));
      expect(grown.serialize().length).toBeGreaterThan(512);
      const parent = trace.setSpanContext(ROOT_CONTEXT, {
        ...(trace.getSpanContext(incoming) as SpanContext),
        traceState: grown,
      });
      const { deliveryIds } = await context.with(parent, () =>
        tracedPublish(queue, { tracer: otel.tracer })(createEvent({ type: "order.created", data: {} })),
      );
      expect((await queue.get(deliveryIds[0] as string))?.tracestate).toBe(`${a},${c},${TRACESTATE}`);
    });

    it("is not sent without propagateTraceContext", async () => {
      const { queue, worker, dispatcher } = await setup([]);
      await context.with(incoming, () =>
        tracedPublish(queue, { tracer: otel.tracer })(createEvent({ type: "order.created", data: {} })),
      );
      worker.start();
      await worker.drained();
      await worker.stop();
      expect(dispatcher.requests).toHaveLength(1);
      expect(dispatcher.requests[0]?.headers).not.toHaveProperty("tracestate");
    });

    it("a caller's traceparent wins with its own tracestate (or none), not the span's", async () => {
      const { queue } = await setup([]);
      const publish = tracedPublish(queue, { tracer: otel.tracer });
      const own = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
      const withOwn = await context.with(incoming, () =>
        publish(createEvent({ type: "order.paid", data: {} }), { traceparent: own, tracestate: "mine=1" }),
      );
      const withNone = await context.with(incoming, () =>
        publish(createEvent({ type: "order.paid", data: {} }), { traceparent: own }),
      );
      expect(await queue.get(withOwn.deliveryIds[0] as string)).toMatchObject({
        traceparent: own,
        tracestate: "mine=1",
      });
      expect(await queue.get(withNone.deliveryIds[0] as string)).not.toHaveProperty("tracestate");
    });

    it("off means free: with no SDK, a caller's tracestate without a traceparent does not fail the publish", async () => {
      const { queue } = await setup([]);
      const { deliveryIds } = await tracedPublish(queue)(createEvent({ type: "order.paid", data: {} }), {
        tracestate: "mine=1",
      });
      expect(await queue.get(deliveryIds[0] as string)).not.toHaveProperty("tracestate");
    });
  });

  it("names the tenant an event is published for on its publish span, and passes it on to the queue", async () => {
    const { queue } = await setup([]);
    const publish = tracedPublish(queue, { tracer: otel.tracer });
    // The setup's endpoint is the operator's: an event for a tenant reaches none of it.
    const { deliveryIds } = await publish(createEvent({ type: "order.paid", data: {} }), { tenant: "acme" });
    expect(deliveryIds).toEqual([]);
    const [span] = otel.spans();
    expect(span?.attributes).toMatchObject({ [ATTRIBUTES.tenant]: "acme", [ATTRIBUTES.messagingBatchCount]: 0 });
  });

  it("off means free: with only the API (no SDK registered) no span is recorded and no traceparent is stored", async () => {
    const { queue } = await setup([]);
    const { deliveryIds } = await tracedPublish(queue)(createEvent({ type: "order.paid", data: {} }));
    expect((await queue.get(deliveryIds[0] as string))?.traceparent).toBeUndefined();
    expect(otel.spans()).toEqual([]);
  });

  it("counts circuit transitions, disabled endpoints and worker errors", async () => {
    const telemetry = deliveryTelemetry({ tracer: otel.tracer, meter: otel.meter });
    telemetry({ type: "circuit", endpointId: "ep_1", status: "open" });
    telemetry({ type: "circuit", endpointId: "ep_1", status: "half_open" });
    telemetry({ type: "circuit", endpointId: "ep_1", status: "closed" });
    telemetry({ type: "endpoint.disabled", endpointId: "ep_1", reason: "gone" });
    telemetry({ type: "error", error: new Error("store down") });
    const circuit = await otel.points(METRIC_NAMES.circuitTransitions);
    expect(circuit.map((p) => p.attributes[ATTRIBUTES.circuitStatus]).sort()).toEqual(["closed", "half_open", "open"]);
    expect(await otel.points(METRIC_NAMES.endpointsDisabled)).toEqual([
      { attributes: { [ATTRIBUTES.disabledReason]: "gone" }, value: 1 },
    ]);
    expect((await otel.points(METRIC_NAMES.workerErrors))[0]?.value).toBe(1);
  });

  it("the worker reports the circuit opening through the listener", async () => {
    const failures: AttemptResult[] = Array.from({ length: 12 }, () => ({
      kind: "response",
      status: 500,
      durationMs: 1,
    }));
    let opened: () => void = () => {};
    const open = new Promise<void>((resolve) => {
      opened = resolve;
    });
    const { queue, worker, events } = await setup(failures, (event) => {
      if (event.type === "circuit" && event.status === "open") opened();
    });
    for (let i = 0; i < 12; i++) await queue.publish(createEvent({ type: "order.created", data: { i } }));
    worker.start();
    // The circuit opens after 10 failures (the default), holding the rest back for its cool-down.
    await open;
    await worker.stop();
    expect(events.filter((e) => e.type === "circuit").map((e) => (e as { status: string }).status)).toContain("open");
    expect(events.filter((e) => e.type === "attempt").length).toBeGreaterThanOrEqual(10);
  });

  it("reports the age of the oldest due delivery, and the depth when told how to count it", async () => {
    const { queue } = await setup([]);
    const t0 = Date.now();
    await queue.publish(createEvent({ type: "order.created", data: {} }), { now: t0 });
    const stop = observeDeliveryQueue(queue, { meter: otel.meter, now: () => t0 + 2_500, depth: () => 1 });
    expect(await otel.points(METRIC_NAMES.oldestDueAge)).toEqual([{ attributes: {}, value: 2.5 }]);
    expect(await otel.points(METRIC_NAMES.queueDepth)).toEqual([{ attributes: {}, value: 1 }]);
    stop();
  });

  it("with no span active and no traceparent, an attempt is a root span", () => {
    const telemetry = deliveryTelemetry({ tracer: otel.tracer, meter: otel.meter });
    telemetry(DELIVERED_UNTRACED);
    const [span] = otel.spans();
    expect(span?.parentSpanContext).toBeUndefined();
    expect(trace.isSpanContextValid(span?.spanContext() ?? { traceId: "", spanId: "", traceFlags: 0 })).toBe(true);
  });

  // Regression: the attempt span took the active context as parent, and the worker's loop keeps the context it was
  // started in (AsyncLocalStorage): a worker started inside a span (a traced bootstrap, an admin request) made every
  // attempt of every delivery published without a traceparent a child of that one span, in one endless trace.
  it("under an active span, an attempt without traceparent is still a root span (the docs: a trace of its own)", () => {
    const telemetry = deliveryTelemetry({ tracer: otel.tracer, meter: otel.meter });
    otel.tracer.startActiveSpan("startup", (startup) => {
      telemetry(DELIVERED_UNTRACED);
      startup.end();
    });
    const attempt = otel.spans().find((span) => span.kind === SpanKind.CLIENT);
    const startup = otel.spans().find((span) => span.name === "startup");
    expect(attempt?.parentSpanContext).toBeUndefined();
    expect(attempt?.spanContext().traceId).not.toBe(startup?.spanContext().traceId);
  });
  it("an attempt whose request could not be built: error.type is its kind (request_invalid), no status, span ERROR", () => {
    const telemetry = deliveryTelemetry({ tracer: otel.tracer });
    const state = {
      status: "failed",
      attempts: 1,
      nextAttemptAt: 6_000,
      lastAttemptAt: 1_000,
      lastStatus: null,
      lastErrorKind: "request_invalid",
      deliveredAt: null,
    } as const;
    telemetry({
      type: "attempt",
      delivery: { id: "d", eventId: "e", eventType: "t", endpointId: "ep", payload: "{}", createdAt: 0, state },
      attempt: {
        deliveryId: "d",
        endpointId: "ep",
        eventId: "e",
        attempt: 1,
        startedAt: 1_000,
        durationMs: 0,
        status: null,
        errorKind: "request_invalid",
        response: "standard-webhooks.sign: the secret is not whsec_ followed by base64",
      },
    });
    const [span] = otel.spans();
    expect(span?.attributes).toMatchObject({
      [ATTRIBUTES.errorKind]: "request_invalid",
      [ATTRIBUTES.errorType]: "request_invalid",
      [ATTRIBUTES.outcome]: "failed",
    });
    expect(span?.attributes).not.toHaveProperty([ATTRIBUTES.httpStatus]);
    expect(span?.status.code).toBe(SpanStatusCode.ERROR);
  });
  it("regression: the attempt duration histogram (seconds) has the HTTP duration buckets, not the SDK's millisecond ones", async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const provider = new MeterProvider({ readers: [reader] });
    const telemetry = deliveryTelemetry({ tracer: otel.tracer, meter: provider.getMeter("buckets") });
    const state = { status: "delivered", attempts: 1, nextAttemptAt: null } as const;
    for (const durationMs of [35, 480, 4_200]) {
      telemetry({
        type: "attempt",
        delivery: { id: "d", eventId: "e", eventType: "t", endpointId: "ep", payload: "{}", createdAt: 0, state },
        attempt: { attempt: 1, startedAt: 0, durationMs, status: 200, errorKind: null },
      } as unknown as DeliveryWorkerEvent);
    }
    await provider.forceFlush();
    const metric = exporter
      .getMetrics()
      .at(-1)
      ?.scopeMetrics.flatMap((scope) => scope.metrics)
      .find((m) => m.descriptor.name === METRIC_NAMES.attemptDuration);
    const value = metric?.dataPoints[0]?.value as { buckets: { boundaries: number[]; counts: number[] } };
    // Semantic conventions, http.client.request.duration.
    expect(value.buckets.boundaries).toStrictEqual([
      0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
    ]);
    // 35 ms, 480 ms and 4.2 s land in three different buckets.
    expect(value.buckets.counts.filter((count) => count > 0)).toHaveLength(3);
    await provider.shutdown();
  });

  describe("regression: telemetry that throws changes nothing", () => {
    for (const part of ["onStart", "onEnd"] as const) {
      it(`tracedPublish, a span processor whose ${part} throws: resolves, the deliveries exist once`, async () => {
        const { queue, endpoint } = await setup([]);
        const publish = tracedPublish(queue, throwingTelemetry(part));
        // A rejection here would make the caller publish again, and the receiver get the event twice.
        const { deliveryIds } = await publish(createEvent({ type: "order.created", data: {} }));
        expect(deliveryIds).toHaveLength(1);
        expect(await queue.list(endpoint.id)).toHaveLength(1);
      });
    }

    it("tracedPublish: the queue's own error still reaches the caller", async () => {
      const { queue } = await setup([]);
      const failing = { ...queue, publish: () => Promise.reject(new Error("store down")) };
      const publish = tracedPublish(failing, throwingTelemetry("onEnd"));
      await expect(publish(createEvent({ type: "order.created", data: {} }))).rejects.toThrow("store down");
    });

    for (const part of ["onStart", "onEnd"] as const) {
      it(`deliveryTelemetry with a span processor whose ${part} throws never throws into the worker`, async () => {
        const telemetry = deliveryTelemetry({ tracer: throwingTelemetry(part).tracer, meter: otel.meter });
        const state = { status: "failed", attempts: 1, nextAttemptAt: 2_000 } as const;
        expect(() =>
          telemetry({
            type: "attempt",
            delivery: { id: "d", eventId: "e", eventType: "t", endpointId: "ep", payload: "{}", createdAt: 0, state },
            attempt: { attempt: 1, startedAt: 1_000, durationMs: 5, status: 503, errorKind: "http_status" },
            target: { scheme: "https", host: "example.com", port: 443 },
          } as unknown as DeliveryWorkerEvent),
        ).not.toThrow();
        // The metrics of the attempt are still recorded.
        expect(await otel.points(METRIC_NAMES.deliveries)).toContainEqual(
          expect.objectContaining({ attributes: expect.objectContaining({ [ATTRIBUTES.errorType]: "503" }) }),
        );
      });
    }

    it("deliveryTelemetry with a meter that throws still records the attempt span", () => {
      const telemetry = deliveryTelemetry({ tracer: otel.tracer, meter: throwingTelemetry("meter").meter });
      const state = { status: "delivered", attempts: 1, nextAttemptAt: null } as const;
      telemetry({
        type: "attempt",
        delivery: { id: "d", eventId: "e", eventType: "t", endpointId: "ep", payload: "{}", createdAt: 0, state },
        attempt: { attempt: 1, startedAt: 1_000, durationMs: 5, status: 200, errorKind: null },
      } as unknown as DeliveryWorkerEvent);
      expect(otel.spans().map((span) => span.name)).toEqual(["POST"]);
    });
  });
});
