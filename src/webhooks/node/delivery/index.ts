export { createDeliveryWorker } from "./delivery-worker";
export type { Dispatcher, DispatcherOptions, Resolver } from "./dispatcher";
export { createDispatcher } from "./dispatcher";
export { createEndpointAdmin, createEndpointHandler } from "./endpoint-api";
export { systemResolver } from "./system-resolver";
export type { DeliveryWorker, DeliveryWorkerEvent, DeliveryWorkerOptions } from "./worker-options";
