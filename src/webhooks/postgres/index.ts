/** rest-webhooks/webhooks/postgres: the durable delivery queue (transactional outbox) and consumer inbox on PostgreSQL. */
export * from "./inbox/index";
export * from "./queue/index";
