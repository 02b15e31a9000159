/**
 * rest-webhooks/webhooks/delivery: the provider side's pure core. Events and their types, the delivery state machine
 * and its defaults, the retry family, endpoints and their management, the endpoint API declared on the router, URL
 * policy (SSRF), and the store interfaces. Stores: `/memory`, `/postgres`; the worker and dispatcher: `/node`.
 */

export { matchesEventPattern } from "../event-pattern/event-pattern";
export {
  type ExponentialBackoffOptions,
  exponentialBackoff,
  type RetryPolicy,
  type SchedulePolicy,
  scheduleBackoff,
  standardWebhooksBackoff,
} from "../retry/backoff";
export type { AddressClass } from "./address-class";
export type { ApiKeyCheck } from "./api-key";
export type { AttemptInput, AttemptRecord, AttemptResult, DeliveryErrorKind } from "./attempt";
export { DELIVERY_ERROR_KINDS } from "./attempt";
export { AttemptCursorError, type AttemptCursorErrorCode } from "./attempt-cursor";
export type { CircuitBoard } from "./circuit-board";
export type { CircuitConfig } from "./circuit-breaker";
export { DELIVERY_DEFAULTS } from "./defaults";
export type {
  AttemptsQuery,
  ClaimedDelivery,
  ClaimOptions,
  DeliveryListOptions,
  DeliveryQueue,
  DeliveryRecord,
  PublishOptions,
  PublishResult,
} from "./delivery-queue";
export type { DeliveryRequest, RequestTarget } from "./delivery-request";
export type { DisabledReason, EndpointSecret, WebhookEndpoint } from "./endpoint";
export {
  type AdminResult,
  createEndpointAdmin,
  type EndpointAdmin,
  type EndpointAdminOptions,
  type EndpointListQuery,
  MAX_REPLAY_BATCH,
  type ReplayBatch,
  type ReplayOptions,
  type ReplayStatus,
  type RotateSecretOptions,
} from "./endpoint-admin";
export { declareEndpointApi, type EndpointApiOptions } from "./endpoint-api";
export type { TenantOf, TenantOfRequest } from "./endpoint-api-tenant";
export type { CreateEndpointInput, UpdateEndpointInput } from "./endpoint-schema";
export type {
  EndpointCreateOptions,
  EndpointListOptions,
  EndpointPatch,
  EndpointStore,
  EndpointWatchEvents,
} from "./endpoint-store";
export { WebhookDeliveryError, type WebhookDeliveryErrorCode } from "./errors";
export { type CreateEventInput, createEvent, type WebhookEvent, webhookEventSchema } from "./event";
export {
  type CatalogEventOptions,
  defineEvents,
  type EventCatalog,
  type EventSchemas,
  type TypedWebhookEvent,
  type WebhookDescription,
} from "./event-catalog";
export { eventPatternSchema, eventTypeSchema } from "./event-type";
export {
  DELIVERY_STATUSES,
  type DeliveryConfig,
  type DeliveryEffect,
  type DeliveryEvent,
  type DeliveryState,
  type DeliveryStatus,
  defaultDeliveryConfig,
  initialDeliveryState,
  type Transition,
  transition,
} from "./state-machine";
export { isTenant, MAX_ENDPOINTS_PER_TENANT, OPERATOR, type Tenant } from "./tenant";
export { TEST_EVENT_TYPE, type TestEventData, testEventDataSchema } from "./test-event";
export {
  checkEndpointUrl,
  type HostResolver,
  type ResolvedAddress,
  type UrlCheck,
  type UrlPolicy,
  type UrlRefusal,
} from "./url-policy";
