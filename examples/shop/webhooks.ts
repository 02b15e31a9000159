import type { Handler } from "rest-webhooks/http";
import type { Router } from "rest-webhooks/routing";
import { scheduleBackoff, type UrlPolicy } from "rest-webhooks/webhooks";
import {
  createDeliveryWorker,
  createEndpointHandler,
  type DeliveryWorker,
  type DeliveryWorkerEvent,
} from "rest-webhooks/webhooks/node";
import { revalidated } from "./body-validators";
import { LIST_CACHE_CONTROL } from "./http-caching";
import type { ShopStorage } from "./storage/types";

/** Where the endpoint API is mounted (Stripe's path). */
export const ENDPOINTS_PATH = "/v1/webhook_endpoints";

/** Options of {@link createWebhooks}. */
export interface ShopWebhooksOptions {
  storage: ShopStorage;
  apiKey: string;
  allowInsecureUrls: boolean;
  retryScheduleMs?: readonly number[] | undefined;
  deliver: boolean;
  now: () => number;
  onDeliveryEvent?: ((event: DeliveryWorkerEvent) => void) | undefined;
}

/** The shop's webhooks: the endpoint API and the delivery worker. */
export interface ShopWebhooks {
  /** The endpoint API handler (it checks the API key itself). */
  readonly handler: Handler;
  /**
   * The same handler for GET and HEAD, with an ETag of the body, Last-Modified, `Cache-Control: private,
   * no-cache` and 304 for matching validators (the endpoint records carry no version to tag).
   */
  readonly reads: Handler;
  /** The worker, when this process delivers. */
  readonly worker: DeliveryWorker | undefined;
  /** Tells the worker that new deliveries were committed. */
  wake(): void;
}

/** The URL policy: public HTTPS only, or (for local use) http:// and loopback too. */
export function urlPolicy(allowInsecure: boolean): UrlPolicy {
  return allowInsecure ? { allowHttp: true, allow: ["127.0.0.0/8", "::1", "localhost"] } : {};
}

/** Creates the endpoint API and, unless `deliver` is false, the delivery worker over the shop's storage. */
export function createWebhooks(options: ShopWebhooksOptions): ShopWebhooks {
  const { storage } = options;
  const policy = urlPolicy(options.allowInsecureUrls);
  const handler = createEndpointHandler({
    endpoints: storage.endpoints,
    queue: storage.queue,
    apiKeys: [options.apiKey],
    basePath: ENDPOINTS_PATH,
    urlPolicy: policy,
    now: options.now,
  });
  const worker = options.deliver
    ? createDeliveryWorker({
        queue: storage.queue,
        endpoints: storage.endpoints,
        dispatcher: { urlPolicy: policy, timeoutMs: 10_000 },
        // A fixed schedule without jitter when one is configured (the demo's 1 s, 2 s), else the default.
        ...(options.retryScheduleMs === undefined ? {} : { retry: scheduleBackoff(options.retryScheduleMs, 0) }),
        pollIntervalMs: storage.kind === "postgres" ? 500 : 1_000,
        userAgent: "rest-webhooks-shop",
        now: options.now,
        ...(options.onDeliveryEvent === undefined ? {} : { onEvent: options.onDeliveryEvent }),
      })
    : undefined;
  // The key-holder's own data: only the client may store it, and it must revalidate (RFC 9111 §5.2.2.4).
  const reads = revalidated(handler, { now: options.now, cacheControl: LIST_CACHE_CONTROL });
  return { handler, reads, worker, wake: () => worker?.wake() };
}

/**
 * Mounts the endpoint API on the router, one declared route per operation, so OpenAPI lists them; reads go
 * through {@link ShopWebhooks.reads}.
 */
export function declareWebhookRoutes(router: Router, webhooks: Pick<ShopWebhooks, "handler" | "reads">): void {
  const base = ENDPOINTS_PATH;
  const item = `${base}/{endpoint_id}`;
  const routes: [method: string, template: string, name: string, summary: string][] = [
    ["POST", base, "webhook_endpoints.create", "Register an endpoint (form or JSON: url, enabled_events[])"],
    ["GET", base, "webhook_endpoints.list", "List endpoints"],
    ["GET", item, "webhook_endpoints.read", "Get an endpoint"],
    ["POST", item, "webhook_endpoints.update", "Update an endpoint"],
    ["PATCH", item, "webhook_endpoints.patch", "Update an endpoint"],
    ["DELETE", item, "webhook_endpoints.remove", "Delete an endpoint"],
    ["POST", `${item}/rotate_secret`, "webhook_endpoints.rotate_secret", "Rotate the signing secret"],
    ["POST", `${item}/replay`, "webhook_endpoints.replay", "Retry every failed delivery since a time"],
    ["GET", `${item}/deliveries`, "webhook_endpoints.deliveries", "The endpoint's deliveries"],
    ["GET", `${item}/deliveries/{delivery_id}`, "webhook_endpoints.delivery", "One delivery"],
    ["POST", `${item}/deliveries/{delivery_id}/retry`, "webhook_endpoints.retry", "Retry a delivery now"],
    ["GET", `${item}/attempts`, "webhook_endpoints.attempts", "The delivery log (attempts, newest first)"],
  ];
  for (const [method, template, name, summary] of routes) {
    const serve = method === "GET" ? webhooks.reads : webhooks.handler;
    router.route(method, template, { name, summary, tags: ["webhooks"] }, ({ request }) => serve(request));
  }
}
