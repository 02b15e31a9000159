export type { AddressClass } from "./address-class";
export { classifyAddress } from "./address-class";
export type { ApiKeyCheck } from "./api-key";
export type { AttemptRecord, AttemptResult, DeliveryErrorKind } from "./attempt";
export { DELIVERY_ERROR_KINDS, isSuccessStatus } from "./attempt";
export type { ExponentialBackoffOptions, RetryPolicy, SchedulePolicy } from "./backoff";
export { exponentialBackoff, scheduleBackoff, standardWebhooksBackoff } from "./backoff";
export type { CircuitConfig, CircuitState } from "./circuit-breaker";
export { circuitAllows, circuitRecord, closedCircuit, defaultCircuitConfig } from "./circuit-breaker";
export { DELIVERY_DEFAULTS } from "./defaults";
export type {
  ClaimedDelivery,
  ClaimOptions,
  DeliveryListOptions,
  DeliveryQueue,
  DeliveryRecord,
  PublishOptions,
  PublishResult,
  Queryable,
} from "./delivery-queue";
export type { DeliveryRequest } from "./delivery-request";
export { buildDeliveryRequest } from "./delivery-request";
export type { DisabledReason, EndpointSecret, WebhookEndpoint } from "./endpoint";
export { activeSecrets, rotateSecrets } from "./endpoint";
export type { AdminResult, EndpointAdmin, EndpointAdminOptions } from "./endpoint-admin";
export { createEndpointAdmin } from "./endpoint-admin";
export type { EndpointHandlerOptions } from "./endpoint-handler";
export { createEndpointHandler } from "./endpoint-handler";
export type { EndpointHealthDecision } from "./endpoint-health";
export { endpointHealthAfter } from "./endpoint-health";
export type { CreateEndpointInput, UpdateEndpointInput } from "./endpoint-schema";
export { createEndpointSchema, deliveryJson, endpointJson, updateEndpointSchema } from "./endpoint-schema";
export type { EndpointListOptions, EndpointPatch, EndpointStore } from "./endpoint-store";
export type { WebhookDeliveryErrorCode } from "./errors";
export { WebhookDeliveryError } from "./errors";
export type { CreateEventInput, WebhookEvent } from "./event";
export { createEvent, webhookEventSchema } from "./event";
export {
  eventPatternSchema,
  eventTypeSchema,
  matchesEventPattern,
  matchesEventType,
  patternsMatching,
} from "./event-type";
export { parseRetryAfter } from "./retry-after";
export type {
  DeliveryConfig,
  DeliveryEffect,
  DeliveryEvent,
  DeliveryState,
  DeliveryStatus,
  Transition,
} from "./state-machine";
export { defaultDeliveryConfig, initialDeliveryState, isScheduled, transition } from "./state-machine";
export type {
  CompiledUrlPolicy,
  HostResolver,
  ResolvedAddress,
  UrlCheck,
  UrlPolicy,
  UrlRefusal,
} from "./url-policy";
export {
  checkAddress,
  checkEndpointUrl,
  checkResolvedAddresses,
  checkResolvedEndpointUrl,
  compileUrlPolicy,
} from "./url-policy";
