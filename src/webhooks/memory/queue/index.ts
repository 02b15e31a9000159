export { createMemoryDeliveryQueue, type MemoryDeliveryQueueOptions } from "./memory-delivery-queue";
export { createMemoryEndpointStore } from "./memory-endpoint-store";
