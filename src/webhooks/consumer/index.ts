/** The webhook consumer: the verifying endpoint, the inbox contract, and the processor. */

export { type AfterSendResponse, takeAfterSend, withAfterSend } from "../../http/after-send";
export { adaptWebhookConsumerFetch, type WebhookConsumerFetchOptions } from "./adapt-fetch";
export { type ProcessorBackoff, type ProcessorBackoffOptions, processorBackoff } from "./backoff";
export { createWebhookConsumer, type WebhookConsumerOptions } from "./consumer-handler";
export {
  type ConsumerErrorCode,
  type ConsumerErrorRecord,
  WebhookConsumerError,
} from "./errors";
export type { InboxEvent, InboxRecord, InboxState } from "./event";
export { defaultEventId, defaultEventType, type EventIdentityInput } from "./event-identity";
export type {
  Inbox,
  InboxAddResult,
  InboxClaim,
  InboxClaimRequest,
  InboxCompleteResult,
  InboxFailOutcome,
} from "./inbox";
export { type ProcessorLoopOptions, runProcessorLoop } from "./process-loop";
export {
  createWebhookProcessor,
  type InboxEventHandler,
  type InboxEventHandlerInput,
  type ProcessorReport,
  WebhookProcessor,
  type WebhookProcessorOptions,
} from "./processor";
