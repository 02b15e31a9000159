/**
 * rest-webhooks/fastify: handlers, routers and webhook consumers as Fastify 5 plugins, through the node adapter.
 * Fastify is an optional peer dependency of this subpath only.
 */
export type { AdapterOptions } from "../http/adapter-options";
export {
  type RestWebhooksPluginOptions,
  restWebhooks,
  type WebhookConsumerPluginOptions,
  webhookConsumer,
} from "./plugin";
