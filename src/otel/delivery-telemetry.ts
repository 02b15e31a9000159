import { type Attributes, ROOT_CONTEXT, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { isSuccessStatus } from "../webhooks/delivery/attempt";
import type { DeliveryWorkerEvent } from "../webhooks/delivery/node/worker-options";
import { ATTRIBUTES as A, METRIC_NAMES, SPAN_NAMES } from "./names";
import {
  contextWithTraceparent,
  quietly,
  seconds,
  startSpanQuietly,
  type TelemetryOptions,
  telemetryOf,
} from "./telemetry";

type AttemptEvent = Extract<DeliveryWorkerEvent, { type: "attempt" }>;

// Seconds: the bucket boundaries the HTTP semantic conventions advise for http.client.request.duration.
const HTTP_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/**
 * A delivery worker listener that turns its events into spans and metrics: one HTTP client span per attempt (a child
 * of the publishing span when the delivery carries its `traceparent`, so one trace reads "event published → attempt 1
 * failed → attempt 2 delivered"), the attempt duration, deliveries by outcome, circuit transitions and disabled
 * endpoints. The span is made after the fact, from the attempt's own start time and duration.
 *
 * @param options the tracer and meter. @default the global ones (no-ops until an SDK is registered)
 * @returns a listener for `createDeliveryWorker({ onEvent })`; it never throws into the worker.
 * @see docs/observability.md
 * @example
 * const telemetry = deliveryTelemetry();
 * createDeliveryWorker({ queue, endpoints, onEvent: (event) => { telemetry(event); notifyOwner(event); } });
 */
export function deliveryTelemetry(options: TelemetryOptions = {}): (event: DeliveryWorkerEvent) => void {
  const { tracer, meter } = telemetryOf(options, "deliveryTelemetry");
  const deliveries = meter.createCounter(METRIC_NAMES.deliveries, {
    description: "Delivery attempts, by the delivery's status after the attempt.",
    unit: "{attempt}",
  });
  const duration = meter.createHistogram(METRIC_NAMES.attemptDuration, {
    description: "Duration of one delivery attempt, request to response or error.",
    unit: "s",
    // The SDK's default buckets (0 to 10 000, made for milliseconds) would put every attempt in the first one or two.
    advice: { explicitBucketBoundaries: HTTP_DURATION_BUCKETS },
  });
  const circuit = meter.createCounter(METRIC_NAMES.circuitTransitions, {
    description: "Circuit breaker transitions, by the status entered.",
    unit: "{transition}",
  });
  const disabled = meter.createCounter(METRIC_NAMES.endpointsDisabled, {
    description: "Endpoints the delivery worker disabled.",
    unit: "{endpoint}",
  });
  const errors = meter.createCounter(METRIC_NAMES.workerErrors, {
    description: "Unexpected errors the delivery worker reported.",
    unit: "{error}",
  });

  function attempted({ delivery, attempt, target }: AttemptEvent): void {
    const outcome = delivery.state.status;
    const failed = attempt.errorKind !== null || attempt.status === null || !isSuccessStatus(attempt.status);
    // HTTP semantic conventions: error.type is the status code for an HTTP failure, else the error's kind.
    const errorType = failed
      ? attempt.status !== null && attempt.errorKind === "http_status"
        ? String(attempt.status)
        : (attempt.errorKind ?? "_OTHER")
      : undefined;
    const metricAttributes: Attributes = { [A.eventType]: delivery.eventType, [A.outcome]: outcome };
    if (errorType !== undefined) metricAttributes[A.errorType] = errorType;
    // Each part on its own: a meter that throws must not cost the span, nor an attribute the span's end.
    quietly(() => deliveries.add(1, metricAttributes));
    quietly(() => duration.record(seconds(attempt.durationMs), metricAttributes));

    // The publishing span is the parent: every attempt of the delivery joins the trace it was published in. Without
    // one, a trace of its own: the context active here is the worker loop's, kept from wherever start() was called
    // (a bootstrap span would otherwise gather every such attempt into one trace).
    const parent =
      delivery.traceparent === undefined
        ? ROOT_CONTEXT
        : contextWithTraceparent(ROOT_CONTEXT, delivery.traceparent, delivery.tracestate);
    // HTTP client span: the method, server.address and server.port (required) are given at creation, for samplers;
    // url.scheme too. url.full is left out on purpose: a webhook URL's path often holds a secret.
    const attributes: Attributes = { [A.httpMethod]: "POST" };
    if (target !== undefined) {
      attributes[A.serverAddress] = target.host;
      attributes[A.serverPort] = target.port;
      attributes[A.urlScheme] = target.scheme;
    }
    const span = startSpanQuietly(
      tracer,
      SPAN_NAMES.attempt,
      { kind: SpanKind.CLIENT, startTime: attempt.startedAt, attributes },
      parent,
    );
    quietly(() => {
      if (!span.isRecording()) return;
      // HTTP semantic conventions: http.request.resend_count is set only on a resend (attempt 2 is resend 1).
      if (attempt.attempt > 1) span.setAttribute(A.httpResendCount, attempt.attempt - 1);
      span.setAttributes({
        [A.endpointId]: delivery.endpointId,
        [A.deliveryId]: delivery.id,
        [A.eventType]: delivery.eventType,
        [A.eventId]: delivery.eventId,
        [A.attempt]: attempt.attempt,
        [A.outcome]: outcome,
      });
      if (attempt.status !== null) span.setAttribute(A.httpStatus, attempt.status);
      if (attempt.errorKind !== null) span.setAttribute(A.errorKind, attempt.errorKind);
      if (errorType !== undefined) {
        span.setAttribute(A.errorType, errorType);
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      const next = delivery.state.nextAttemptAt;
      if (outcome === "failed" && next !== null) span.setAttribute(A.nextRetryAt, new Date(next).toISOString());
    });
    quietly(() => span.end(attempt.startedAt + attempt.durationMs));
  }

  return (event) => {
    try {
      switch (event.type) {
        case "attempt":
          return attempted(event);
        case "circuit":
          return circuit.add(1, { [A.circuitStatus]: event.status });
        case "endpoint.disabled":
          return disabled.add(1, { [A.disabledReason]: event.reason });
        case "error":
          return errors.add(1);
        default:
          // delivery.delivered / failed / exhausted: the attempt event already said it.
          return;
      }
    } catch {
      // Telemetry must not change what the worker does.
    }
  };
}
