import { context, type Span, SpanKind, trace } from "@opentelemetry/api";
import type { DeliveryQueue, PublishOptions, PublishResult } from "../webhooks/delivery/delivery-queue";
import type { WebhookEvent } from "../webhooks/delivery/event";
import { truncateTracestate } from "../webhooks/delivery/trace-context";
import { ATTRIBUTES as A, MESSAGING_SYSTEM, SPAN_NAMES } from "./names";
import {
  formatTraceparent,
  markFailed,
  quietly,
  startSpanQuietly,
  type TelemetryOptions,
  telemetryOf,
} from "./telemetry";

/**
 * The span's `tracestate` (§3.3.1.4: its members joined by ","), when it has any. A list the SDK let grow past what
 * the queue keeps (§3.3.1.1: 32 members, §3.3.1.5: 512 characters) loses whole members as §3.3.1.5 says (those over
 * 128 characters first, then from the end) rather than all of them, and is never a reason for the publish to fail.
 */
function spanTracestate(span: Span): string | undefined {
  const serialized = span.spanContext().traceState?.serialize();
  return serialized === undefined ? undefined : truncateTracestate(serialized) || undefined;
}

/** `queue.publish` with a span: see {@link tracedPublish}. */
export type TracedPublish = (event: WebhookEvent, options?: PublishOptions) => Promise<PublishResult>;

/**
 * Publishes through `queue` inside a PRODUCER span `publish <event type>` (messaging semantic conventions), a child of
 * the active span (your request's, your transaction's), and stores that span's `traceparent` (and its `tracestate`,
 * when it has one) with every delivery so the attempts join the same trace. With no SDK registered the span is a no-op
 * and no `traceparent` is stored.
 *
 * @param queue any delivery queue; for the transactional outbox, the queue on your transaction
 *   (`tracedPublish(queue.withClient(tx))`): the span then sits inside the transaction's.
 * @param options the tracer. @default the global one
 * @returns a function with the signature of `queue.publish`.
 * @see docs/observability.md
 * @example
 * await transaction(pool, async (tx) => {
 *   await saveOrder(tx, order);
 *   await tracedPublish(queue.withClient(tx))(createEvent({ type: "order.created", data: order }));
 * });
 */
export function tracedPublish(queue: DeliveryQueue, options: TelemetryOptions = {}): TracedPublish {
  if (typeof queue?.publish !== "function") throw new TypeError("tracedPublish: queue must be a DeliveryQueue");
  const { tracer } = telemetryOf(options, "tracedPublish");
  return async (event, publishOptions = {}) => {
    const span = startSpanQuietly(tracer, `${SPAN_NAMES.publish} ${event.type}`, {
      kind: SpanKind.PRODUCER,
      attributes: {
        [A.messagingSystem]: MESSAGING_SYSTEM,
        [A.messagingOperationName]: "publish",
        [A.messagingOperationType]: "send",
        [A.messagingDestination]: event.type,
        [A.messagingMessageId]: event.id,
        [A.eventType]: event.type,
        [A.eventId]: event.id,
        // Whose endpoints it fans out to: a search by customer finds their events.
        ...(publishOptions.tenant === undefined ? {} : { [A.tenant]: publishOptions.tenant }),
      },
    });
    // An explicit traceparent from the caller wins: it knows better which span the deliveries belong to. Its
    // tracestate, if any, goes with it; else the span's (W3C Trace Context §3.3: the two travel together).
    const own = publishOptions.traceparent !== undefined;
    const traceparent = own ? publishOptions.traceparent : formatTraceparent(span.spanContext());
    const tracestate = own ? publishOptions.tracestate : (publishOptions.tracestate ?? spanTracestate(span));
    let result: PublishResult;
    try {
      result = await context.with(trace.setSpan(context.active(), span), () =>
        queue.publish(
          event,
          traceparent === undefined
            ? // No span to continue (no SDK): a tracestate alone means nothing, and the queue refuses it.
              { ...publishOptions, tracestate: undefined }
            : { ...publishOptions, traceparent, tracestate },
        ),
      );
    } catch (error) {
      quietly(() => markFailed(span, error));
      quietly(() => span.end());
      throw error;
    }
    // The deliveries exist: a failing span must not tell the caller to publish again (it would duplicate them).
    quietly(() => span.setAttribute(A.messagingBatchCount, result.deliveryIds.length));
    quietly(() => span.end());
    return result;
  };
}
