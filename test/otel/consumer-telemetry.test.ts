import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import express from "express";
import Fastify from "fastify";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { adapt as expressAdapt } from "../../src/express/index";
import { restWebhooks } from "../../src/fastify/index";
import type { HttpRequest } from "../../src/http/message";
import { adapt as nodeAdapt } from "../../src/node/index";
import { ATTRIBUTES, instrumentInbox, METRIC_NAMES, traceWebhookReceipt } from "../../src/otel/index";
import { createWebhookConsumer, createWebhookProcessor } from "../../src/webhooks/consumer/index";
import { createMemoryInbox } from "../../src/webhooks/consumer/memory/index";
import { buildDeliveryRequest } from "../../src/webhooks/delivery/delivery-request";
import { generateSecret } from "../../src/webhooks/signing/index";
import { otelFixture, throwingTelemetry } from "./otel-fixture";

const otel = otelFixture();
afterAll(() => otel.close());
beforeEach(() => otel.reset());

const secret = generateSecret();
const SENDER = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7" };
const TRACEPARENT = `00-${SENDER.traceId}-${SENDER.spanId}-01`;

/** The request the delivery worker sends, as the consumer's handler sees it. */
function incoming(eventId: string, traceparent?: string, secrets = [{ secret, expiresAt: null }]): HttpRequest {
  const payload = JSON.stringify({ type: "order.shipped", timestamp: new Date().toISOString(), data: { eventId } });
  const built = buildDeliveryRequest(
    { eventId, payload },
    { url: "https://consumer.example/hooks", secrets },
    Date.now(),
    { traceparent },
  );
  return {
    method: "POST",
    path: "/hooks",
    search: "",
    query: {},
    headers: built.headers,
    body: new TextEncoder().encode(built.body),
  };
}

function setup() {
  const telemetry = { tracer: otel.tracer, meter: otel.meter };
  const inbox = instrumentInbox(createMemoryInbox(), telemetry);
  const handler = traceWebhookReceipt(createWebhookConsumer({ inbox, secrets: secret, onError: () => {} }), telemetry);
  return { inbox, handler };
}

describe("consumer telemetry", () => {
  it("continues the sender's trace from traceparent: receipt, then a processing span linked to it", async () => {
    const { inbox, handler } = setup();
    const request = incoming("msg_1", TRACEPARENT);
    expect(request.headers.traceparent).toBe(TRACEPARENT);
    expect((await handler(request)).status).toBe(202);
    const processor = createWebhookProcessor({ inbox }).on("order.*", () => {});
    expect((await processor.processDue()).done).toBe(1);

    const [receipt, processing] = otel.spans();
    expect(receipt?.name).toBe("receive webhook");
    expect(receipt?.kind).toBe(SpanKind.CONSUMER);
    expect(receipt?.spanContext().traceId).toBe(SENDER.traceId);
    expect(receipt?.parentSpanContext?.spanId).toBe(SENDER.spanId);
    expect(receipt?.parentSpanContext?.isRemote).toBe(true);
    expect(receipt?.attributes).toMatchObject({
      [ATTRIBUTES.messagingMessageId]: "msg_1",
      [ATTRIBUTES.eventId]: "msg_1",
      [ATTRIBUTES.eventType]: "order.shipped",
      [ATTRIBUTES.duplicate]: false,
      [ATTRIBUTES.consumerOutcome]: "stored",
      [ATTRIBUTES.httpStatus]: 202,
    });
    expect(processing?.name).toBe("process order.shipped");
    expect(processing?.kind).toBe(SpanKind.CONSUMER);
    expect(processing?.links.map((link) => link.context.spanId)).toEqual([receipt?.spanContext().spanId]);
    expect(processing?.attributes).toMatchObject({ [ATTRIBUTES.consumerOutcome]: "done", [ATTRIBUTES.attempt]: 1 });
  });

  // Regression: the receipt took the sender's span as parent with no span active, and had no tie to it at all under
  // an active span (an HTTP server or framework instrumentation's that did not continue the traceparent).
  describe("the creation context (OpenTelemetry messaging conventions, consumer spans)", () => {
    const creationLinks = () => otel.spans()[0]?.links.map((link) => ({ ...link.context, traceState: undefined }));
    const SENDER_LINK = [{ ...SENDER, traceFlags: 1, isRemote: true, traceState: undefined }];

    it("with no span active, is the receipt's parent and its link", async () => {
      const { handler } = setup();
      expect((await handler(incoming("msg_link1", TRACEPARENT))).status).toBe(202);
      expect(otel.spans()[0]?.parentSpanContext?.spanId).toBe(SENDER.spanId);
      expect(creationLinks()).toStrictEqual(SENDER_LINK);
    });

    it("under an active span, stays its link while the active span is the parent", async () => {
      const { handler } = setup();
      // An HTTP server span that did not continue the traceparent (another propagator, or none for public routes).
      const status = await otel.tracer.startActiveSpan(
        "POST",
        { root: true, kind: SpanKind.SERVER },
        async (active) => {
          const answer = await handler(incoming("msg_link2", TRACEPARENT));
          active.end();
          return answer.status;
        },
      );
      expect(status).toBe(202);
      const receipt = otel.spans().find((span) => span.name === "receive webhook");
      const ambient = otel
        .spans()
        .find((span) => span.name === "POST" && span.spanContext().traceId !== SENDER.traceId);
      expect(receipt?.parentSpanContext?.spanId).toBe(ambient?.spanContext().spanId);
      expect(receipt?.spanContext().traceId).not.toBe(SENDER.traceId);
      expect(receipt?.links.map((link) => link.context.spanId)).toStrictEqual([SENDER.spanId]);
    });

    it("has no link without a valid traceparent", async () => {
      const { handler } = setup();
      await handler(incoming("msg_link3"));
      const bad = incoming("msg_link4");
      await handler({ ...bad, headers: { ...bad.headers, traceparent: "00-zz-00f067aa0ba902b7-01" } });
      for (const span of otel.spans()) expect(span.links).toStrictEqual([]);
    });

    describe("the same from the node adapter, Express and Fastify", () => {
      const servers: Server[] = [];
      afterEach(async () => {
        for (const server of servers.splice(0)) {
          server.closeAllConnections();
          await new Promise((resolve) => server.close(resolve));
        }
      });
      const listen = async (listener: Parameters<typeof createServer>[1]) => {
        const server = createServer(listener);
        servers.push(server);
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
        return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      };
      const post = async (base: string, request: HttpRequest) =>
        (
          await fetch(`${base}/hooks`, {
            method: "POST",
            body: Buffer.from(request.body),
            headers: request.headers as Record<string, string>,
          })
        ).status;

      it.each([["node"], ["express"], ["fastify"]])("%s: parent and link as above", async (name) => {
        const { handler } = setup();
        let base: string;
        if (name === "node") base = await listen(nodeAdapt(handler));
        else if (name === "express") base = await listen(express().use(expressAdapt(handler)));
        else {
          const app = Fastify();
          await app.register(restWebhooks, { handler });
          base = await app.listen({ port: 0, host: "127.0.0.1" });
          servers.push(app.server);
        }
        expect(await post(base, incoming("msg_adapter", TRACEPARENT))).toBe(202);
        expect(trace.getActiveSpan()).toBeUndefined();
        expect(otel.spans()[0]?.parentSpanContext?.spanId).toBe(SENDER.spanId);
        expect(creationLinks()).toStrictEqual(SENDER_LINK);
      });
    });
  });

  describe("tracestate (W3C Trace Context §3.3: propagated with traceparent)", () => {
    const TRACESTATE = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";
    const withTracestate = (request: HttpRequest, traceparent: string, tracestate: string): HttpRequest => ({
      ...request,
      headers: { ...request.headers, traceparent, tracestate },
    });

    it("regression: the sender's tracestate was dropped; the receipt and its children now carry it", async () => {
      const { handler } = setup();
      expect((await handler(withTracestate(incoming("msg_ts1"), TRACEPARENT, TRACESTATE))).status).toBe(202);
      const [receipt] = otel.spans();
      expect(receipt?.parentSpanContext?.spanId).toBe(SENDER.spanId);
      expect(receipt?.parentSpanContext?.traceState?.serialize()).toBe(TRACESTATE);
      expect(receipt?.spanContext().traceState?.get("congo")).toBe("t61rcWkgMzE");
    });

    it("reads two tracestate lines as one list, as the adapters join them", async () => {
      const { handler } = setup();
      await handler(withTracestate(incoming("msg_ts2"), TRACEPARENT, "congo=t61rcWkgMzE, rojo=00f067aa0ba902b7"));
      expect(otel.spans()[0]?.parentSpanContext?.traceState?.serialize()).toBe(TRACESTATE);
    });

    // §3.3: a vendor that failed to parse traceparent MUST NOT attempt to parse tracestate.
    it("is ignored with a malformed traceparent", async () => {
      const { handler } = setup();
      await handler(withTracestate(incoming("msg_ts3"), "00-zz-00f067aa0ba902b7-01", TRACESTATE));
      const [receipt] = otel.spans();
      expect(receipt?.parentSpanContext).toBeUndefined();
      expect(receipt?.spanContext().traceState).toBeUndefined();
    });
  });

  it("without traceparent the receipt starts a trace of its own; a malformed one is ignored", async () => {
    const { handler } = setup();
    await handler(incoming("msg_2"));
    const bad = incoming("msg_3");
    await handler({ ...bad, headers: { ...bad.headers, traceparent: "00-zz-00f067aa0ba902b7-01" } });
    for (const span of otel.spans()) expect(span.parentSpanContext).toBeUndefined();
  });

  it("counts received, duplicate, processed, failed and rejected events", async () => {
    const total = async (name: string) => (await otel.points(name)).reduce((sum, point) => sum + point.value, 0);
    const names = [
      METRIC_NAMES.consumerReceived,
      METRIC_NAMES.consumerDuplicate,
      METRIC_NAMES.consumerProcessed,
      METRIC_NAMES.consumerFailed,
      METRIC_NAMES.consumerRejected,
    ];
    // The meter provider is shared by the file's cases, and its sums are cumulative: count from here.
    const before = await Promise.all(names.map(total));
    const { inbox, handler } = setup();
    await handler(incoming("msg_a"));
    await handler(incoming("msg_a")); // the sender's retry
    await handler(incoming("msg_b"));
    const wrong = incoming("msg_c", undefined, [{ secret: generateSecret(), expiresAt: null }]);
    expect((await handler(wrong)).status).toBe(400);
    let calls = 0;
    const processor = createWebhookProcessor({ inbox, onError: () => {} }).on("order.*", () => {
      calls++;
      if (calls === 1) throw new Error("handler failed");
    });
    await processor.processDue();

    const after = await Promise.all(names.map(total));
    // received 2, duplicate 1, processed 1 (the other failed once: 1), rejected 1.
    expect(after.map((value, i) => value - (before[i] ?? 0))).toEqual([2, 1, 1, 1, 1]);
    const rejected = otel.spans().find((span) => span.attributes[ATTRIBUTES.httpStatus] === 400);
    expect(rejected?.status.code).toBe(SpanStatusCode.ERROR);
    expect(rejected?.attributes[ATTRIBUTES.consumerOutcome]).toBe("rejected");
    const duplicate = otel.spans().filter((span) => span.attributes[ATTRIBUTES.duplicate] === true);
    expect(duplicate).toHaveLength(1);
  });

  it("regression: an unknown method is _OTHER, the method as sent in http.request.method_original", async () => {
    const { handler } = setup();
    const request = incoming("msg_m");
    await handler({ ...request, method: "PROPFIND" });
    await handler({ ...request, method: "post" });
    const spans = otel.spans();
    expect(spans.map((span) => span.attributes[ATTRIBUTES.httpMethod])).toEqual(["_OTHER", "_OTHER"]);
    expect(spans.map((span) => span.attributes[ATTRIBUTES.httpMethodOriginal])).toEqual(["PROPFIND", "post"]);
    await handler(request);
    expect(otel.spans()[2]?.attributes[ATTRIBUTES.httpMethod]).toBe("POST");
    expect(otel.spans()[2]?.attributes).not.toHaveProperty(ATTRIBUTES.httpMethodOriginal);
  });

  it("puts neither the secret nor the signature in any attribute", async () => {
    const { inbox, handler } = setup();
    const request = incoming("msg_s", TRACEPARENT);
    const signature = request.headers["webhook-signature"] ?? "";
    expect(signature).not.toBe("");
    await handler(request);
    await handler({ ...request, headers: { ...request.headers, "webhook-signature": `${signature}x` } });
    await createWebhookProcessor({ inbox })
      .on("order.*", () => {})
      .processDue();
    const values = otel.spans().flatMap((span) => Object.values(span.attributes).map(String));
    expect(values.length).toBeGreaterThan(0);
    for (const value of values) {
      expect(value).not.toContain(signature.split(",").at(-1));
      expect(value).not.toContain(secret.slice("whsec_".length));
    }
  });

  describe("regression: telemetry that throws changes nothing", () => {
    for (const part of ["onStart", "onEnd", "meter"] as const) {
      it(`a ${part} that throws: the receipt is still 202 and the event processed once`, async () => {
        const telemetry = throwingTelemetry(part);
        const inbox = instrumentInbox(createMemoryInbox(), telemetry);
        const consumer = createWebhookConsumer({ inbox, secrets: secret, onError: () => {} });
        const handler = traceWebhookReceipt(consumer, telemetry);
        // The sender's retry after a 5xx would be a duplicate: the first answer must already be the 202.
        expect((await handler(incoming("msg_t", TRACEPARENT))).status).toBe(202);
        const errors: unknown[] = [];
        let calls = 0;
        const processor = createWebhookProcessor({ inbox, onError: (error) => errors.push(error) }).on(
          "order.*",
          () => {
            calls++;
          },
        );
        expect(await processor.processDue()).toMatchObject({ done: 1, lost: 0, errors: 0 });
        expect(errors).toEqual([]);
        expect(calls).toBe(1);
        // A handler that fails is still a failure, with the handler's own error.
        const failing = createWebhookProcessor({ inbox, onError: (error) => errors.push(error) }).on("order.*", () => {
          throw new Error("handler failed");
        });
        expect((await handler(incoming("msg_u"))).status).toBe(202);
        expect(await failing.processDue()).toMatchObject({ done: 0, retried: 1 });
        expect(errors.map((error) => (error as Error).message)).toEqual(["handler failed"]);
      });

      it(`a ${part} that throws: a refused delivery keeps its 400, a handler's own error still reaches the caller`, async () => {
        const telemetry = throwingTelemetry(part);
        const inbox = instrumentInbox(createMemoryInbox(), telemetry);
        const handler = traceWebhookReceipt(createWebhookConsumer({ inbox, secrets: secret }), telemetry);
        // Signed with another secret: refused, and counted as rejected (the meter's add throws).
        const refused = await handler(incoming("msg_r", TRACEPARENT, [{ secret: generateSecret(), expiresAt: null }]));
        expect(refused.status).toBe(400);
        expect(await inbox.get("msg_r")).toBeUndefined();
        const failing = traceWebhookReceipt(() => Promise.reject(new Error("store down")), telemetry);
        await expect(failing(incoming("msg_s"))).rejects.toThrow("store down");
      });
    }
  });
});
