export { adaptWebhookConsumer } from "./adapt-consumer";
export { type ProcessorRunner, type ProcessorRunnerOptions, startWebhookProcessor } from "./processor-runner";
