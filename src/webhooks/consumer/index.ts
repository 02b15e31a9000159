/**
 * rest-webhooks/webhooks/consumer: the consumer side. The verifying endpoint (`createWebhookConsumer`: verify on the
 * raw body, store in the inbox, acknowledge at once), the inbox contract, and the processor that runs handlers later
 * and once in effect. Inboxes: `/memory`, `/postgres`; the processor loop on real timers: `/node`.
 */

export { matchesEventPattern } from "../event-pattern/event-pattern";
export {
  type ExponentialBackoffOptions,
  exponentialBackoff,
  type RetryPolicy,
  type SchedulePolicy,
  scheduleBackoff,
} from "../retry/backoff";
export { createWebhookConsumer, type WebhookConsumerOptions } from "./consumer-handler";
export { type ConsumerErrorCode, type ConsumerErrorRecord, WebhookConsumerError } from "./errors";
export type { InboxEvent, InboxRecord, InboxState } from "./event";
export { defaultEventId, defaultEventType, type EventIdentityInput } from "./event-identity";
export { InboxEventTooLargeError } from "./event-too-large";
export type {
  Inbox,
  InboxAddResult,
  InboxAddSource,
  InboxClaim,
  InboxClaimRequest,
  InboxCompleteOptions,
  InboxCompleteResult,
  InboxFailOutcome,
} from "./inbox";
export { InboxFullError } from "./inbox-full";
export { type ProcessorLoopOptions, runProcessorLoop } from "./process-loop";
export {
  createWebhookProcessor,
  type InboxEventHandler,
  type InboxEventHandlerInput,
  type ProcessorReport,
  WebhookProcessor,
  type WebhookProcessorOptions,
} from "./processor";
