/**
 * Every span name, metric name and attribute key the instrumentation writes (docs/observability.md lists them).
 * Names follow the OpenTelemetry semantic conventions where one exists (HTTP client spans, messaging spans,
 * `error.type`); the rest are namespaced `webhook.*`, `idempotency.*` and `ratelimit.*`.
 */

/** Span names. Messaging spans are `{operation} {destination}` (semantic conventions, "Messaging spans", span name). */
export const SPAN_NAMES = {
  /** PRODUCER span of `tracedPublish`: `publish <event type>`. */
  publish: "publish",
  /** CLIENT span of one delivery attempt: the HTTP method (HTTP client span name without a url template). */
  attempt: "POST",
  /** CONSUMER span of the consumer's endpoint: verification and the inbox write. */
  receive: "receive webhook",
  /** CONSUMER span of one processing attempt: `process <event type>`. */
  process: "process",
} as const;

/** Metric names. */
export const METRIC_NAMES = {
  /** Counter: attempts by the delivery's status after them (`webhook.delivery.outcome`) and event type. */
  deliveries: "webhook.deliveries",
  /** Histogram, seconds: one delivery attempt, request to response (or error). */
  attemptDuration: "webhook.delivery.attempt.duration",
  /** Gauge: deliveries waiting (pending or failed with a retry scheduled). */
  queueDepth: "webhook.delivery.queue.depth",
  /** Gauge, seconds: how long the earliest due delivery has been due (0 when none is). */
  oldestDueAge: "webhook.delivery.queue.oldest_due.age",
  /** Counter: circuit breaker transitions, by the status entered (`webhook.circuit.status`). */
  circuitTransitions: "webhook.endpoint.circuit.transitions",
  /** Counter: endpoints the worker disabled, by `webhook.endpoint.disabled_reason`. */
  endpointsDisabled: "webhook.endpoint.disabled",
  /** Counter: errors the worker reported (a store that failed, a listener's own failure is not one). */
  workerErrors: "webhook.delivery.worker.errors",
  /** Counter: verified events the consumer stored (new ones). */
  consumerReceived: "webhook.consumer.events.received",
  /** Counter: verified events the inbox already held. */
  consumerDuplicate: "webhook.consumer.events.duplicate",
  /** Counter: events processed (the handler finished, or no handler and marked done). */
  consumerProcessed: "webhook.consumer.events.processed",
  /** Counter: processing attempts that failed (the handler threw, or the inbox failed while settling). */
  consumerFailed: "webhook.consumer.events.failed",
  /** Counter: requests rejected before the inbox (bad signature, stale timestamp, malformed event). */
  consumerRejected: "webhook.consumer.requests.rejected",
  /** Counter: idempotency decisions, by `idempotency.decision`. */
  idempotencyDecisions: "idempotency.decisions",
  /** Counter: rate-limit decisions, by `ratelimit.decision`. */
  rateLimitDecisions: "ratelimit.decisions",
} as const;

/** Attribute keys. */
export const ATTRIBUTES = {
  // Semantic conventions (stable HTTP, messaging, error).
  httpMethod: "http.request.method",
  httpMethodOriginal: "http.request.method_original",
  httpStatus: "http.response.status_code",
  httpRoute: "http.route",
  httpResendCount: "http.request.resend_count",
  serverAddress: "server.address",
  serverPort: "server.port",
  urlScheme: "url.scheme",
  errorType: "error.type",
  messagingSystem: "messaging.system",
  messagingOperationName: "messaging.operation.name",
  messagingOperationType: "messaging.operation.type",
  messagingDestination: "messaging.destination.name",
  messagingMessageId: "messaging.message.id",
  messagingBatchCount: "messaging.batch.message_count",
  // This package's own.
  endpointId: "webhook.endpoint.id",
  deliveryId: "webhook.delivery.id",
  eventType: "webhook.event.type",
  eventId: "webhook.event.id",
  tenant: "webhook.tenant",
  attempt: "webhook.attempt",
  errorKind: "webhook.error.kind",
  nextRetryAt: "webhook.next_retry_at",
  outcome: "webhook.delivery.outcome",
  circuitStatus: "webhook.circuit.status",
  disabledReason: "webhook.endpoint.disabled_reason",
  consumerOutcome: "webhook.consumer.outcome",
  duplicate: "webhook.duplicate",
  idempotencyDecision: "idempotency.decision",
  rateLimitDecision: "ratelimit.decision",
} as const;

/** `messaging.system` of every messaging span: webhooks are not one of the semantic conventions' listed systems. */
export const MESSAGING_SYSTEM = "webhooks";
