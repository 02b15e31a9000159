import { afterAll, beforeAll } from "vitest";
import type { Handler } from "../../../src/http/message";
import { isHttpProblem } from "../../../src/http/problem";
import { MIGRATIONS_TABLE, type Migration, migrate, type SqlDatabase } from "../../../src/postgres/index";
import type { DeliveryQueue } from "../../../src/webhooks/delivery/delivery-queue";
import type { EndpointStore } from "../../../src/webhooks/delivery/endpoint-store";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../src/webhooks/delivery/memory/index";
import { createDeliveryWorker } from "../../../src/webhooks/delivery/node/index";
import {
  createPostgresDeliveryQueue,
  createPostgresEndpointStore,
  deliveryMigrations,
  type PostgresDeliveryQueueOptions,
} from "../../../src/webhooks/delivery/postgres/index";
import type { Backend, OpenDatabase } from "../../support/databases";
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
/** A memory endpoint store and the memory queue over it. */
export async function memoryDeliveryStores(): Promise<DeliveryStores> {
  const endpoints = createMemoryEndpointStore();
  return { endpoints, queue: createMemoryDeliveryQueue({ endpoints }) };
}

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

/** A suite's database and the delivery stores' schemas on it: see {@link deliveryDatabase}. */
export interface DeliveryDatabase {
  /** The suite's database, open from before its first test to after its last. */
  readonly db: SqlDatabase;
  /** A new schema name, not created: for a test of the migrations themselves. Dropped after the suite. */
  unmigrated(): string;
  /** A new schema of its own, migrated by `migrations` (every delivery migration by default). Dropped after the suite. */
  fresh(migrations?: (schema: string) => readonly Migration[]): Promise<string>;
  /**
   * The suite's shared schema, migrated once and emptied again for each caller: what a fresh schema would be for a
   * test that keeps nothing of its own in it beyond the tables' rows (not the prepared statements a connection keeps
   * per schema, nor a migration's history).
   */
  emptied(): Promise<string>;
}

/**
 * Opens a database of `backend` for the suite this is called in (before its first test, closed after its last), with
 * fresh delivery schemas on it. A migration is two dozen DDL statements and a drop as many again, a few hundred
 * milliseconds a test under load; `emptied` hands the one schema the suite migrated, its tables TRUNCATEd: new, empty
 * files, their sequences restarted, as a fresh schema's are, for a fraction of a migration.
 */
export function deliveryDatabase(backend: Backend, options: { prefix: string; max?: number }): DeliveryDatabase {
  let open: OpenDatabase | undefined;
  const created: string[] = [];
  let shared: { schema: string; tables: string } | undefined;
  beforeAll(async () => {
    open = await backend.open({ max: options.max ?? 6 });
  });
  afterAll(async () => {
    if (open === undefined) return;
    // One statement for them all; on PGlite closing would do, but a server keeps what is not dropped.
    if (created.length > 0) {
      await open.db.query(`DROP SCHEMA IF EXISTS ${created.map((schema) => `"${schema}"`).join(", ")} CASCADE`);
    }
    await open.close();
  });
  const database: DeliveryDatabase = {
    get db() {
      if (open === undefined) throw new Error("deliveryDatabase: the database is open only while the suite runs");
      return open.db;
    },
    unmigrated() {
      const schema = uniqueName(options.prefix).toLowerCase();
      created.push(schema);
      return schema;
    },
    async fresh(migrations = (schema) => deliveryMigrations({ schema })) {
      const schema = database.unmigrated();
      await migrate(database.db, migrations(schema));
      return schema;
    },
    async emptied() {
      if (shared === undefined) {
        const schema = await database.fresh();
        const { rows } = await database.db.query(
          "SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename <> $2 ORDER BY tablename",
          [schema, MIGRATIONS_TABLE],
        );
        const names = rows.map((row) => `"${schema}"."${(row as { tablename: string }).tablename}"`);
        shared = { schema, tables: names.join(", ") };
        return schema;
      }
      await database.db.query(`TRUNCATE ${shared.tables} RESTART IDENTITY`);
      return shared.schema;
    },
  };
  return database;
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
