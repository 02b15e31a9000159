/**
 * rest-webhooks/express: handlers, routers and webhook consumers as Express 5 middleware, through the node
 * adapter. Express is an optional peer dependency of this subpath only.
 */
export type { AdapterOptions } from "../http/adapter-options";
export { adapt, type ExpressMiddleware } from "./adapt";
export type { ExpressRequest } from "./body";
export { ExpressIntegrationError, type ExpressIntegrationErrorCode } from "./errors";
export { type ExpressWebhookConsumerOptions, webhookConsumer } from "./webhook-consumer";
