/**
 * rest-webhooks/webhooks: signing and verification, the delivery state machine, the consumer
 * handler and processor, and the in-memory (embedded default) queue and inbox.
 */
export * from "./consumer/index";
export * from "./delivery/index";
export * from "./memory/inbox/index";
export * from "./memory/queue/index";
export * from "./signing/index";
