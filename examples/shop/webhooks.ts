import type { Router } from "rest-webhooks/routing";
import { declareEndpointApi, scheduleBackoff, type UrlPolicy } from "rest-webhooks/webhooks/delivery";
import {
  createDeliveryWorker,
  type DeliveryWorker,
  type DeliveryWorkerEvent,
  systemResolver,
} from "rest-webhooks/webhooks/delivery/node";
import { revalidated } from "./body-validators";
import { shopEvents } from "./events";
import { LIST_CACHE_CONTROL } from "./http-caching";
import type { ShopStorage } from "./storage/types";

/** Where the endpoint API is mounted (Stripe's path). */
export const ENDPOINTS_PATH = "/v1/webhook_endpoints";

/** Options of {@link declareWebhooks}. */
export interface ShopWebhooksOptions {
  storage: ShopStorage;
  apiKey: string;
  allowInsecureUrls: boolean;
  retryScheduleMs?: readonly number[] | undefined;
  /** The egress proxy deliveries go through, if any. */
  proxy?: string | undefined;
  /** How long an open circuit waits before its probe, ms. @default the worker's */
  circuitCoolDownMs?: number | undefined;
  deliver: boolean;
  now: () => number;
  onDeliveryEvent?: ((event: DeliveryWorkerEvent) => void) | undefined;
}

/** The shop's webhooks: the delivery worker, when this process delivers. */
export interface ShopWebhooks {
  readonly worker: DeliveryWorker | undefined;
  /** Tells the worker that new deliveries were committed. */
  wake(): void;
}

/** The URL policy: public HTTPS only, or (for local use) http:// and loopback too. */
export function urlPolicy(allowInsecure: boolean): UrlPolicy {
  return allowInsecure ? { allowHttp: true, allow: ["127.0.0.0/8", "::1", "localhost"] } : {};
}

/**
 * Declares the endpoint API on the router (one call: its routes, validation, 404/405 and OpenAPI come from the
 * router) and creates the delivery worker over the shop's storage, unless `deliver` is false. Reads carry an ETag of
 * the body, Last-Modified, `Cache-Control: private, no-cache` and answer 304 (the records carry no version to tag).
 * An endpoint's ETag is the API's own, which its PATCH, POST and DELETE check If-Match against (412 when stale).
 */
export function declareWebhooks(router: Router, options: ShopWebhooksOptions): ShopWebhooks {
  const { storage } = options;
  const policy = urlPolicy(options.allowInsecureUrls);
  declareEndpointApi(router, {
    endpoints: storage.endpoints,
    queue: storage.queue,
    apiKeys: [options.apiKey],
    basePath: ENDPOINTS_PATH,
    urlPolicy: policy,
    // Host names are resolved at registration, so one pointing at a private address is refused then.
    resolve: systemResolver,
    // Subscriptions name the shop's event types (or patterns of them).
    events: shopEvents,
    now: options.now,
    // The key-holder's own data: only the client may store it, and it must revalidate (RFC 9111 §5.2.2.4).
    use: [revalidated({ now: options.now, cacheControl: LIST_CACHE_CONTROL })],
  });
  const worker = options.deliver
    ? createDeliveryWorker({
        queue: storage.queue,
        endpoints: storage.endpoints,
        dispatcher: {
          urlPolicy: policy,
          timeoutMs: 10_000,
          ...(options.proxy === undefined ? {} : { proxy: options.proxy }),
        },
        // A fixed schedule without jitter when one is configured (the demo's 1 s, 2 s), else the default.
        ...(options.retryScheduleMs === undefined ? {} : { retry: scheduleBackoff(options.retryScheduleMs, 0) }),
        ...(options.circuitCoolDownMs === undefined ? {} : { circuit: { coolDownMs: options.circuitCoolDownMs } }),
        pollIntervalMs: storage.kind === "postgres" ? 500 : 1_000,
        userAgent: "rest-webhooks-shop",
        now: options.now,
        ...(options.onDeliveryEvent === undefined ? {} : { onEvent: options.onDeliveryEvent }),
      })
    : undefined;
  return { worker, wake: () => worker?.wake() };
}
