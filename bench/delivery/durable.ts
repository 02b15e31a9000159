// The durable queues of bench/delivery: the PostgreSQL delivery queue on a server (a pg Pool) and on embedded PGlite
// (one connection, in this process), each in a fresh schema, beside the in-memory queue. Information: no target.
import { randomUUID } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { migrate, type SqlDatabase } from "../../src/postgres/index";
import {
  createPostgresDeliveryQueue,
  createPostgresEndpointStore,
  deliveryMigrations,
} from "../../src/webhooks/delivery/postgres/index";
import type { Stores } from "./contenders";

/** A database the rounds share, and how each round gets fresh stores on it. */
export interface DurableBackend {
  readonly name: "postgres" | "pglite";
  readonly stores: Stores;
  close(): Promise<void>;
}

function backend(name: DurableBackend["name"], db: SqlDatabase, close: () => Promise<void>): DurableBackend {
  const schemas: string[] = [];
  return {
    name,
    async stores() {
      const schema = `bench_dlv_${randomUUID().slice(0, 8)}`;
      schemas.push(schema);
      await migrate(db, deliveryMigrations({ schema }));
      return {
        endpoints: createPostgresEndpointStore({ client: db, schema }),
        queue: createPostgresDeliveryQueue({ client: db, schema }),
      };
    },
    async close() {
      for (const schema of schemas) await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await close();
    },
  };
}

export function serverBackend(url: string): DurableBackend {
  const pool = new pg.Pool({ connectionString: url, max: 8 });
  return backend("postgres", pool, () => pool.end());
}

/** An in-memory PGlite (initdb takes several seconds, once). */
export async function pgliteBackend(): Promise<DurableBackend> {
  const db = await PGlite.create();
  return backend("pglite", db, () => db.close());
}
