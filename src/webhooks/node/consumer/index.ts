export { type ProcessorRunner, type ProcessorRunnerOptions, startWebhookProcessor } from "./processor-runner";
