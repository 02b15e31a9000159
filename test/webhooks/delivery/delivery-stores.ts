import type { Handler } from "../../../src/http/message";
import { isHttpProblem } from "../../../src/http/problem";
import { migrate } from "../../../src/postgres/index";
import type { DeliveryQueue } from "../../../src/webhooks/delivery/delivery-queue";
import type { EndpointStore } from "../../../src/webhooks/delivery/endpoint-store";
import { createDeliveryWorker } from "../../../src/webhooks/delivery/node/index";
import {
  createPostgresDeliveryQueue,
  createPostgresEndpointStore,
  deliveryMigrations,
  type PostgresDeliveryQueueOptions,
} from "../../../src/webhooks/delivery/postgres/index";
import type { Backend } from "../../support/databases";
import { uniqueName } from "../../support/services";

/** An endpoint store and a queue on one database. */
export interface DeliveryStores {
  endpoints: EndpointStore;
  queue: DeliveryQueue;
}

/**
 * The PostgreSQL stores in a schema of their own on `backend`, migrated; `cleanups` gets what drops the schema and
 * closes the connection.
 */
export async function postgresDeliveryStores(
  backend: Backend,
  cleanups: (() => Promise<void>)[],
  options: { prefix: string; max?: number; queue?: Partial<PostgresDeliveryQueueOptions> },
): Promise<DeliveryStores> {
  const open = await backend.open({ max: options.max ?? 4 });
  const schema = uniqueName(options.prefix).toLowerCase();
  cleanups.push(async () => {
    await open.db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await open.close();
  });
  await migrate(open.db, deliveryMigrations({ schema }));
  return {
    endpoints: createPostgresEndpointStore({ client: open.db, schema }),
    queue: createPostgresDeliveryQueue({ ...options.queue, client: open.db, schema }),
  };
}

/** What an adapter does with a thrown problem: answers it. */
export function answered(handler: Handler): Handler {
  return async (request) => {
    try {
      return await handler(request);
    } catch (error) {
      if (isHttpProblem(error)) return error.toResponse();
      throw error;
    }
  };
}

/**
 * Runs the delivery worker over `stores` until nothing is due: loopback receivers allowed, and no second chance, so
 * a delivery to the wrong receiver, or none, shows as it is.
 */
export async function deliverAll(stores: DeliveryStores, cleanups: (() => Promise<void>)[]): Promise<void> {
  const worker = createDeliveryWorker({
    ...stores,
    dispatcher: { urlPolicy: { allowHttp: true, allow: ["127.0.0.1"] }, timeoutMs: 10_000 },
    retry: () => undefined,
    circuit: false,
    endpointCacheMs: 0,
  });
  cleanups.push(() => worker.stop());
  worker.start();
  await worker.drained();
}
