import { context, SpanKind, trace } from "@opentelemetry/api";
import type { DeliveryQueue, PublishOptions, PublishResult } from "../webhooks/delivery/delivery-queue";
import type { WebhookEvent } from "../webhooks/delivery/event";
import { ATTRIBUTES as A, MESSAGING_SYSTEM, SPAN_NAMES } from "./names";
import {
  formatTraceparent,
  markFailed,
  quietly,
  startSpanQuietly,
  type TelemetryOptions,
  telemetryOf,
} from "./telemetry";

/** `queue.publish` with a span: see {@link tracedPublish}. */
export type TracedPublish = (event: WebhookEvent, options?: PublishOptions) => Promise<PublishResult>;

/**
 * Publishes through `queue` inside a PRODUCER span `publish <event type>` (messaging semantic conventions), a child of
 * the active span (your request's, your transaction's), and stores that span's `traceparent` with every delivery so
 * the attempts join the same trace. With no SDK registered the span is a no-op and no `traceparent` is stored.
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
    // An explicit traceparent from the caller wins: it knows better which span the deliveries belong to.
    const traceparent = publishOptions.traceparent ?? formatTraceparent(span.spanContext());
    let result: PublishResult;
    try {
      result = await context.with(trace.setSpan(context.active(), span), () =>
        queue.publish(event, traceparent === undefined ? publishOptions : { ...publishOptions, traceparent }),
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
