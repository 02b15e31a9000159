import { context, type Link, type SpanContext, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { Handler, HttpResponse } from "../http/message";
import { requiredFunction } from "../options/function-option";
import type { Inbox, InboxCompleteResult } from "../webhooks/consumer/inbox";
import { ATTRIBUTES as A, MESSAGING_SYSTEM, METRIC_NAMES, SPAN_NAMES } from "./names";
import {
  markFailed,
  methodAttributes,
  parseTraceparent,
  quietly,
  startSpanQuietly,
  type TelemetryOptions,
  telemetryOf,
} from "./telemetry";

/** Receipts remembered per instrumented inbox, so a processing span can link to its receipt (this process only). */
const REMEMBERED_RECEIPTS = 1_024;

/**
 * Wraps the consumer's endpoint (`createWebhookConsumer(...)`) in a CONSUMER span `receive webhook` covering the
 * signature check and the inbox write. A valid `traceparent` (W3C Trace Context §3.2), with its `tracestate` (§3.3),
 * names the event's creation context (the sender's publishing span): the span always links to it, and takes it as
 * parent only when no span is active; an active span (an HTTP server or framework instrumentation's) stays the
 * parent, as the OpenTelemetry messaging conventions ask of a message pushed over HTTP. So the node adapter, Express
 * and Fastify give the same link whatever their instrumentations make active. Verification failures count as
 * rejected.
 *
 * @param handler the consumer's handler.
 * @param options the tracer and meter. @default the global ones
 * @returns a handler with the same answers.
 * @see docs/observability.md
 * @example
 * const consumer = traceWebhookReceipt(createWebhookConsumer({ inbox: instrumentInbox(inbox), secrets }));
 */
export function traceWebhookReceipt(handler: Handler, options: TelemetryOptions = {}): Handler {
  requiredFunction("traceWebhookReceipt", "handler", handler);
  const { tracer, meter } = telemetryOf(options, "traceWebhookReceipt");
  const rejected = meter.createCounter(METRIC_NAMES.consumerRejected, {
    description: "Webhook requests refused before the inbox (signature, timestamp, malformed event).",
    unit: "{request}",
  });
  return async (request) => {
    const active = context.active();
    const creation = parseTraceparent(request.headers.traceparent, request.headers.tracestate);
    // Messaging conventions, "Consumer spans": a consumer span SHOULD link to the message's creation context, and
    // MAY take it as parent only when not in the scope of another span ("Message creation context as parent").
    const parent =
      creation === undefined || trace.getSpan(active) !== undefined ? active : trace.setSpanContext(active, creation);
    const id = request.headers["webhook-id"];
    const span = startSpanQuietly(
      tracer,
      SPAN_NAMES.receive,
      {
        kind: SpanKind.CONSUMER,
        links: creation === undefined ? [] : [{ context: creation }],
        attributes: {
          [A.messagingSystem]: MESSAGING_SYSTEM,
          [A.messagingOperationName]: "receive",
          [A.messagingOperationType]: "receive",
          ...methodAttributes(request.method),
          ...(id === undefined ? {} : { [A.messagingMessageId]: id }),
        },
      },
      parent,
    );
    let response: HttpResponse;
    try {
      response = await context.with(trace.setSpan(parent, span), () => handler(request));
    } catch (error) {
      quietly(() => markFailed(span, error));
      quietly(() => span.end());
      throw error;
    }
    // The answer stands whatever the telemetry does: the inbox may already hold the event.
    quietly(() => {
      const status = response.status;
      span.setAttribute(A.httpStatus, status);
      if (status < 400) return;
      const outcome = status >= 500 ? "unavailable" : "rejected";
      span.setAttributes({ [A.consumerOutcome]: outcome, [A.errorType]: String(status) });
      span.setStatus({ code: SpanStatusCode.ERROR });
      if (outcome === "rejected") rejected.add(1, { [A.httpStatus]: status });
    });
    quietly(() => span.end());
    return response;
  };
}

/**
 * Wraps an inbox so storing and processing are observed: `add` counts received and duplicate events and marks the
 * active (receipt) span; `complete` runs the handler inside a CONSUMER span `process <event type>` linked to the
 * receipt's span when this process received it, and counts processed and failed events.
 *
 * @param inbox any inbox (memory, PostgreSQL); the wrapper has the {@link Inbox} methods only.
 * @param options the tracer and meter. @default the global ones
 * @returns an inbox to give both the consumer handler and the processor.
 * @see docs/observability.md
 * @example
 * const inbox = instrumentInbox(createMemoryInbox());
 * const processor = createWebhookProcessor({ inbox });
 */
export function instrumentInbox<Context extends object>(
  inbox: Inbox<Context>,
  options: TelemetryOptions = {},
): Inbox<Context> {
  if (typeof inbox?.add !== "function" || typeof inbox.complete !== "function") {
    throw new TypeError("instrumentInbox: inbox must be an Inbox");
  }
  const { tracer, meter } = telemetryOf(options, "instrumentInbox");
  const received = meter.createCounter(METRIC_NAMES.consumerReceived, {
    description: "Verified webhook events stored in the inbox.",
    unit: "{event}",
  });
  const duplicate = meter.createCounter(METRIC_NAMES.consumerDuplicate, {
    description: "Verified webhook events the inbox already held.",
    unit: "{event}",
  });
  const processed = meter.createCounter(METRIC_NAMES.consumerProcessed, {
    description: "Inbox events processed.",
    unit: "{event}",
  });
  const failed = meter.createCounter(METRIC_NAMES.consumerFailed, {
    description: "Inbox processing attempts that failed.",
    unit: "{event}",
  });
  const receipts = new Map<string, SpanContext>();

  return {
    async add(event, source) {
      // Read before awaiting: without an async context manager the receipt's span is active only until then.
      const span = trace.getSpan(context.active());
      const result = await inbox.add(event, source);
      // The event is stored: a failing meter or span must not turn that into an error (the sender would retry).
      quietly(() => {
        (result.duplicate ? duplicate : received).add(1, { [A.eventType]: event.type });
        if (!span?.isRecording()) return;
        span.setAttributes({
          [A.eventId]: event.id,
          [A.eventType]: event.type,
          [A.duplicate]: result.duplicate,
          [A.consumerOutcome]: result.duplicate ? "duplicate" : "stored",
        });
        if (!result.duplicate) {
          // Oldest first out: Map keeps insertion order.
          if (receipts.size >= REMEMBERED_RECEIPTS) receipts.delete(receipts.keys().next().value as string);
          receipts.set(event.id, span.spanContext());
        }
      });
      return result;
    },
    async complete(claim, work, now, options) {
      const { event } = claim;
      const receipt = receipts.get(event.id);
      const links: Link[] = receipt === undefined ? [] : [{ context: receipt }];
      const span = startSpanQuietly(tracer, `${SPAN_NAMES.process} ${event.type}`, {
        kind: SpanKind.CONSUMER,
        links,
        attributes: {
          [A.messagingSystem]: MESSAGING_SYSTEM,
          [A.messagingOperationName]: "process",
          [A.messagingOperationType]: "process",
          [A.messagingDestination]: event.type,
          [A.messagingMessageId]: event.id,
          [A.eventType]: event.type,
          [A.eventId]: event.id,
          [A.attempt]: claim.attempts,
        },
      });
      const inSpan = trace.setSpan(context.active(), span);
      const attributes = { [A.eventType]: event.type };
      let result: InboxCompleteResult;
      try {
        result = await inbox.complete(claim, (value) => context.with(inSpan, () => work(value)), now, options);
      } catch (error) {
        quietly(() => failed.add(1, attributes));
        quietly(() => markFailed(span, error));
        quietly(() => span.end());
        throw error;
      }
      // The outcome is settled in the inbox: telemetry that throws must not make the processor see a failure.
      quietly(() => {
        span.setAttribute(A.consumerOutcome, result.outcome);
        if (result.outcome === "done") {
          receipts.delete(event.id);
          processed.add(1, attributes);
        } else if (result.outcome === "failed") {
          failed.add(1, attributes);
          markFailed(span, result.error);
        }
      });
      quietly(() => span.end());
      return result;
    },
    claim: (request) => inbox.claim(request),
    fail: (claim, outcome, now) => inbox.fail(claim, outcome, now),
    get: (id) => inbox.get(id),
    deadLetters: (query) => inbox.deadLetters(query),
    retryDeadLetter: (id, now) => inbox.retryDeadLetter(id, now),
    purgeDone: (before) => inbox.purgeDone(before),
  };
}
