/** rest-webhooks/webhooks/node: the I/O runners — the delivery dispatcher and worker, and the consumer's processor loop. */
export * from "./consumer/index";
export * from "./delivery/index";
