/**
 * rest-webhooks/webhooks/delivery/node: the delivery worker and its HTTP dispatcher (node:http with the SSRF check on
 * every connection), and the system DNS resolver for registration checks.
 */
export { createDeliveryWorker } from "./delivery-worker";
export { createDispatcher, type Dispatcher, type DispatcherOptions } from "./dispatcher";
export {
  createSystemResolver,
  SYSTEM_RESOLVER_TIMEOUT_MS,
  type SystemResolverOptions,
  systemResolver,
} from "./system-resolver";
export type { DeliveryWorker, DeliveryWorkerEvent, DeliveryWorkerOptions } from "./worker-options";
