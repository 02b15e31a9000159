/**
 * rest-webhooks/otel: OpenTelemetry spans and metrics for deliveries, consumers and requests. The only entry point
 * that imports `@opentelemetry/api` (an optional peer dependency); with no SDK registered every span and instrument
 * is the API's no-op. Names: docs/observability.md.
 */
export { instrumentInbox, traceWebhookReceipt } from "./consumer-telemetry";
export { deliveryTelemetry } from "./delivery-telemetry";
export { ATTRIBUTES, MESSAGING_SYSTEM, METRIC_NAMES, SPAN_NAMES } from "./names";
export { observeDeliveryQueue, type QueueGaugeOptions } from "./queue-gauges";
export { type IdempotencyDecisionName, instrumentRateLimiter, tracedIdempotency } from "./request-telemetry";
export { tracedRoute } from "./route-telemetry";
export {
  contextWithTraceparent,
  formatTraceparent,
  INSTRUMENTATION_SCOPE,
  parseTraceparent,
  type TelemetryOptions,
} from "./telemetry";
export { type TracedPublish, tracedPublish } from "./traced-publish";
