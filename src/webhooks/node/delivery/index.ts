export { createDeliveryWorker } from "./delivery-worker";
export type { Dispatcher, DispatcherOptions, Resolver } from "./dispatcher";
export { createDispatcher } from "./dispatcher";
export type { DeliveryWorker, DeliveryWorkerEvent, DeliveryWorkerOptions } from "./worker-options";
