export type { PostgresDeliveryQueueOptions } from "./postgres-delivery-queue";
export { createPostgresDeliveryQueue } from "./postgres-delivery-queue";
export type { PostgresEndpointStoreOptions } from "./postgres-endpoint-store";
export { createPostgresEndpointStore } from "./postgres-endpoint-store";
export type { WebhookTablesOptions } from "./tables";
export { migrateWebhookQueue, webhookQueueMigration } from "./tables";
