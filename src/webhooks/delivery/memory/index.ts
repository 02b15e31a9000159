/** rest-webhooks/webhooks/delivery/memory: the in-memory delivery queue and endpoint store (the embedded default). */

export { createMemoryCircuitBoard } from "./memory-circuit-board";
export { createMemoryDeliveryQueue, type MemoryDeliveryQueueOptions } from "./memory-delivery-queue";
export { createMemoryEndpointStore } from "./memory-endpoint-store";
