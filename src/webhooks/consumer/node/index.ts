/** rest-webhooks/webhooks/consumer/node: the processor loop on real timers. */
export { type ProcessorRunner, type ProcessorRunnerOptions, startWebhookProcessor } from "./processor-runner";
