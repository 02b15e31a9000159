import { conditional } from "rest-webhooks/caching";
import type { Handler } from "rest-webhooks/http";
import { idempotency } from "rest-webhooks/idempotency";
import { openPglite } from "rest-webhooks/postgres";
import { createRouter, type Router } from "rest-webhooks/routing";
import type { DeliveryWorker, DeliveryWorkerEvent } from "rest-webhooks/webhooks/delivery/node";
import { createVerifier, principalOf } from "./auth";
import type { ShopConfig } from "./config";
import { randomId, type ShopContext } from "./context";
import { declareOpenApi } from "./openapi";
import { declareOrderCollection } from "./order-lists";
import { createMemoryStorage } from "./storage/memory";
import { createPostgresStorage } from "./storage/postgres";
import type { ShopStorage } from "./storage/types";
import { declareUsers } from "./users";
import { declareWebhooks } from "./webhooks";

/** Extra wiring for {@link createShop}: tests and the demo pass their own storage or listen to deliveries. */
export interface ShopOptions {
  /** Use this storage instead of opening the one the config names; the shop then closes it on `close()`. */
  storage?: ShopStorage;
  /** Told about every delivery outcome (the demo prints them). */
  onDeliveryEvent?: (event: DeliveryWorkerEvent) => void;
  /** Where the shop says what it does at start (e.g. that it initialises a new data directory). */
  log?: (line: string) => void;
}

/** A running shop: one {@link Handler} to serve with any adapter, and its parts. */
export interface Shop {
  readonly handler: Handler;
  readonly router: Router;
  readonly storage: ShopStorage;
  /** The delivery worker, when `config.deliver` is true (started). */
  readonly worker: DeliveryWorker | undefined;
  /** Stops the worker and closes the storage. */
  close(): Promise<void>;
}

async function openStorage(config: ShopConfig, log: (line: string) => void): Promise<ShopStorage> {
  const storage = config.storage;
  if (storage.kind === "memory") return createMemoryStorage();
  if (storage.kind === "postgres") return createPostgresStorage({ connection: storage.url, schema: storage.schema });
  const db = await openPglite(storage.dataDir, {
    onInitialise: (dir) => log(`initialising a new PGlite data directory at ${dir} (a few seconds, once)`),
  });
  try {
    return await createPostgresStorage({ connection: db, schema: storage.schema, close: () => db.close() });
  } catch (error) {
    await db.close();
    throw error;
  }
}

/**
 * Builds the shop from its configuration: users and their orders (and `GET /orders` across users) behind JWT
 * authentication, conditional requests and idempotency keys, the webhook endpoint API, the delivery worker,
 * and `GET /openapi.json`.
 * @example
 * const shop = await createShop(config);
 * createServer(shop.handler, { bodyLimit: config.bodyLimit }).listen(3000);
 */
export async function createShop(config: ShopConfig, options: ShopOptions = {}): Promise<Shop> {
  const storage = options.storage ?? (await openStorage(config, options.log ?? (() => {})));
  const now = config.now ?? Date.now;
  const router = createRouter();
  const webhooks = declareWebhooks(router, {
    storage,
    apiKey: config.apiKey,
    allowInsecureUrls: config.allowInsecureWebhookUrls,
    retryScheduleMs: config.retryScheduleMs,
    proxy: config.webhookProxy,
    circuitCoolDownMs: config.webhookCircuitCoolDownMs,
    deliver: config.deliver,
    now,
    onDeliveryEvent: options.onDeliveryEvent,
  });
  // Wakes the delivery worker for the events a transaction committed (one function, not one per write).
  const committed = <T>(result: T): T => {
    webhooks.wake();
    return result;
  };
  const ctx: ShopContext = {
    storage,
    now,
    newId: randomId,
    write: (request, work) => storage.transaction(work, request).then(committed),
    requestScope: storage.requestScope(() => webhooks.wake()),
    verify: createVerifier(config.jwtSecret),
    // Keys are scoped to the token's subject: one caller can never replay another's response.
    idempotent: idempotency({
      store: (request) => storage.idempotency(request),
      identify: (request) => principalOf(request).subject,
    }),
    conditionalList: conditional({ now }),
  };
  declareUsers(router, ctx);
  declareOrderCollection(router, ctx);
  declareOpenApi(router, now);
  router.build();
  webhooks.worker?.start();
  return {
    handler: router.handler(),
    router,
    storage,
    worker: webhooks.worker,
    async close() {
      await webhooks.worker?.stop();
      await storage.close();
    },
  };
}
