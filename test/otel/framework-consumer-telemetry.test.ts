/**
 * The receipt span of a consumer mounted with the Express and Fastify helpers (`wrap: traceWebhookReceipt`), on real
 * Express 5 and Fastify 5 apps: the same span, parent and link as on the node adapter, and the same answers as
 * without tracing.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import express from "express";
import Fastify from "fastify";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { adapt as expressAdapt, webhookConsumer as expressConsumer } from "../../src/express/index";
import { webhookConsumer as fastifyConsumer } from "../../src/fastify/index";
import type { Handler } from "../../src/http/message";
import { adapt as nodeAdapt } from "../../src/node/index";
import { ATTRIBUTES, instrumentInbox, traceWebhookReceipt } from "../../src/otel/index";
import { createWebhookConsumer, type WebhookConsumerOptions } from "../../src/webhooks/consumer/index";
import { webhookFixture } from "../support/signed-webhook";
import { otelFixture } from "./otel-fixture";

const otel = otelFixture();
afterAll(() => otel.close());
beforeEach(() => otel.reset());

const SENDER = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7" };
const TRACEPARENT = `00-${SENDER.traceId}-${SENDER.spanId}-01`;

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function listen(listener: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const trace = (handler: Handler) => traceWebhookReceipt(handler, { tracer: otel.tracer, meter: otel.meter });

type Mount = "node" | "express" | "express behind express.raw()" | "fastify";
const MOUNTS: Mount[] = ["node", "express", "express behind express.raw()", "fastify"];

/** The consumer at `/webhooks`, traced: node composes the handler; Express and Fastify take `wrap`. */
async function serve(mount: Mount, options: WebhookConsumerOptions): Promise<string> {
  if (mount === "node") return listen(nodeAdapt(trace(createWebhookConsumer(options))));
  if (mount === "express") return listen(express().post("/webhooks", expressConsumer({ ...options, wrap: trace })));
  if (mount === "express behind express.raw()") {
    // Its default inflate: true decodes a Content-Encoding.
    const middleware = expressConsumer({ ...options, wrap: trace });
    return listen(express().post("/webhooks", express.raw({ type: "*/*" }), middleware));
  }
  const app = Fastify();
  servers.push(app.server);
  await app.register(fastifyConsumer, { ...options, url: "/webhooks", wrap: trace });
  return app.listen({ port: 0, host: "127.0.0.1" });
}

/** What a backend shows of the receipt span: everything but ids and times. */
const shown = (span: ReadableSpan | undefined) => ({
  name: span?.name,
  kind: span?.kind,
  status: span?.status.code,
  traceId: span?.spanContext().traceId,
  parent: span?.parentSpanContext?.spanId,
  links: span?.links.map((link) => link.context.spanId),
  attributes: span?.attributes,
});

describe("traceWebhookReceipt around the Express and Fastify consumer helpers (wrap)", () => {
  const fixture = () => {
    const f = webhookFixture();
    return {
      ...f,
      options: { ...f.options, inbox: instrumentInbox(f.inbox, { tracer: otel.tracer, meter: otel.meter }) },
    };
  };

  it.each(MOUNTS)("%s: a delivery with traceparent gets the node adapter's receipt span and 202", async (mount) => {
    const f = fixture();
    const { body, headers } = f.delivery("msg_traced");
    const sent = { ...headers, traceparent: TRACEPARENT };
    const response = await fetch(`${await serve(mount, f.options)}/webhooks`, { method: "POST", body, headers: sent });
    expect(response.status).toBe(202);
    const spans = otel.spans();
    expect(spans).toHaveLength(1);
    expect(shown(spans[0])).toStrictEqual({
      name: "receive webhook",
      kind: SpanKind.CONSUMER,
      status: SpanStatusCode.UNSET,
      traceId: SENDER.traceId,
      parent: SENDER.spanId,
      links: [SENDER.spanId],
      attributes: {
        [ATTRIBUTES.messagingSystem]: "webhooks",
        [ATTRIBUTES.messagingOperationName]: "receive",
        [ATTRIBUTES.messagingOperationType]: "receive",
        [ATTRIBUTES.httpMethod]: "POST",
        [ATTRIBUTES.messagingMessageId]: "msg_traced",
        [ATTRIBUTES.eventId]: "msg_traced",
        [ATTRIBUTES.eventType]: "order.shipped",
        [ATTRIBUTES.duplicate]: false,
        [ATTRIBUTES.consumerOutcome]: "stored",
        [ATTRIBUTES.httpStatus]: 202,
      },
    });
  });

  // Regression: the documented way to trace the Express helper, adapt(traceWebhookReceipt(createWebhookConsumer(o))),
  // answered a Content-Encoding delivery behind an inflating express.raw() 500 body_consumed, where node answers 415.
  describe("a delivery sent with Content-Encoding: gzip", () => {
    const gzipped = (f: ReturnType<typeof fixture>) => {
      const { body, headers } = f.delivery("msg_gz");
      return { body: gzipSync(body), headers: { ...headers, "content-encoding": "gzip", traceparent: TRACEPARENT } };
    };
    const answer = async (response: Response) => ({
      status: response.status,
      acceptEncoding: response.headers.get("accept-encoding"),
      body: await response.json(),
    });

    it.each(MOUNTS)("%s: the node adapter's 415, traced as the node adapter traces it", async (mount) => {
      const f = fixture();
      const untraced = webhookFixture();
      const plain = await answer(
        await fetch(`${await listen(nodeAdapt(createWebhookConsumer(untraced.options)))}/webhooks`, {
          method: "POST",
          ...gzipped(f),
        }),
      );
      expect(plain).toMatchObject({ status: 415, acceptEncoding: "identity" });
      otel.reset();
      const traced = await answer(
        await fetch(`${await serve(mount, f.options)}/webhooks`, { method: "POST", ...gzipped(f) }),
      );
      expect(traced).toStrictEqual(plain);
      const [span] = otel.spans();
      expect(shown(span)).toMatchObject({
        name: "receive webhook",
        status: SpanStatusCode.ERROR,
        parent: SENDER.spanId,
        links: [SENDER.spanId],
        attributes: { [ATTRIBUTES.httpStatus]: 415, [ATTRIBUTES.consumerOutcome]: "rejected" },
      });
      expect(await f.inbox.get("msg_gz")).toBeUndefined();
    });

    it("the old workaround, express adapt(traceWebhookReceipt(...)), still refuses it 500 (adapt serves any handler)", async () => {
      const f = fixture();
      const app = express()
        .use(express.raw({ type: "*/*" }))
        .use(expressAdapt(trace(createWebhookConsumer(f.options)), { onError: () => {} }));
      expect((await fetch(`${await listen(app)}/webhooks`, { method: "POST", ...gzipped(f) })).status).toBe(500);
    });
  });

  describe("wrap is checked when the helper is made", () => {
    const options = () => webhookFixture().options;

    it("a wrap that is no function is a TypeError naming it", async () => {
      const wrap = "traceWebhookReceipt" as unknown as (handler: Handler) => Handler;
      expect(() => expressConsumer({ ...options(), wrap })).toThrow(
        /^rest-webhooks\/express webhookConsumer: wrap must be a function/,
      );
      const app = Fastify();
      await expect(app.register(fastifyConsumer, { ...options(), url: "/webhooks", wrap }).ready()).rejects.toThrow(
        /^rest-webhooks\/fastify webhookConsumer: wrap must be a function/,
      );
    });

    it("a wrap that returns no handler is a TypeError, not a 500 on every delivery", async () => {
      const wrap = (() => undefined) as unknown as (handler: Handler) => Handler;
      expect(() => expressConsumer({ ...options(), wrap })).toThrow(
        /wrap must return a handler function, got undefined/,
      );
      const app = Fastify();
      await expect(app.register(fastifyConsumer, { ...options(), url: "/webhooks", wrap }).ready()).rejects.toThrow(
        TypeError,
      );
    });

    it("is called once, with the consumer's handler, and never handed to the consumer as an option", async () => {
      const wrapped: Handler[] = [];
      const wrap = (handler: Handler): Handler => {
        wrapped.push(handler);
        return handler;
      };
      const f = webhookFixture();
      const base = await listen(express().post("/webhooks", expressConsumer({ ...f.options, wrap })));
      const { body, headers } = f.delivery("msg_once");
      expect((await fetch(`${base}/webhooks`, { method: "POST", body, headers })).status).toBe(202);
      expect((await fetch(`${base}/webhooks`, { method: "POST", body, headers })).status).toBe(202);
      expect(wrapped).toHaveLength(1);
      expect(typeof wrapped[0]).toBe("function");
    });
  });
});
