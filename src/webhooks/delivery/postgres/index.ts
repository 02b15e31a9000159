/**
 * rest-webhooks/webhooks/delivery/postgres: the durable delivery queue (the transactional outbox) and endpoint store
 * on PostgreSQL or PGlite. Create the tables with `migrate(pool, deliveryMigrations())` from `rest-webhooks/postgres`.
 */

export type { ListenOptions } from "./channel-listener";
export { type DeliveryTablesOptions, deliveryMigrations } from "./delivery-tables";
export { createPostgresCircuitBoard, type PostgresCircuitBoardOptions } from "./postgres-circuit-board";
export {
  createPostgresDeliveryQueue,
  type PostgresDeliveryQueue,
  type PostgresDeliveryQueueOptions,
} from "./postgres-delivery-queue";
export { createPostgresEndpointStore, type PostgresEndpointStoreOptions } from "./postgres-endpoint-store";
