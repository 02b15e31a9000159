import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll } from "vitest";
import type { AdapterOptions, Handler } from "../../../src/http/index";
import { adapt } from "../../../src/node/index";
import { migrate, type SqlDatabase } from "../../../src/postgres/index";
import {
  createPostgresInbox,
  inboxMigrations,
  type PostgresInbox,
} from "../../../src/webhooks/consumer/postgres/index";
import type { Backend, OpenDatabase } from "../../support/databases";
import { uniqueName } from "../../support/services";

/** Serves `handler` on an ephemeral loopback port, through the node adapter (after-send callbacks run on 'finish'). */
export async function listen(
  handler: Handler,
  options: AdapterOptions = {},
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer({ joinDuplicateHeaders: true }, adapt(handler, options));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A gate a test opens by hand: ordering is proven by who waits on whom, never by timing. */
export function latch(): { promise: Promise<void>; open: () => void; readonly isOpen: boolean } {
  let open = () => {};
  let isOpen = false;
  const promise = new Promise<void>((resolve) => {
    open = () => {
      isOpen = true;
      resolve();
    };
  });
  return {
    promise,
    open: () => open(),
    get isOpen() {
      return isOpen;
    },
  };
}

/** Unix seconds now. */
export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/**
 * POSTs from a worker thread, which stores the status it received in `status[0]` (and wakes
 * `Atomics.wait` on it) as soon as the response head arrives, independently of this thread's event loop.
 */
export async function postFromThread(
  url: string,
  delivery: { body: string; headers: Record<string, string> },
  status: Int32Array,
): Promise<number> {
  const { Worker } = await import("node:worker_threads");
  const worker = new Worker(
    `const { parentPort, workerData } = require("node:worker_threads");
     const { url, body, headers, status } = workerData;
     fetch(url, { method: "POST", body, headers }).then(
       (response) => {
         Atomics.store(status, 0, response.status);
         Atomics.notify(status, 0);
         parentPort.postMessage(response.status);
       },
       () => parentPort.postMessage(-1),
     );`,
    { eval: true, workerData: { url, body: delivery.body, headers: delivery.headers, status } },
  );
  try {
    return await new Promise<number>((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
    });
  } finally {
    await worker.terminate();
  }
}

/**
 * A PostgreSQL inbox on `backend` for the suite that calls it: migrated once (before all), dropped after all. Its
 * `fresh()` empties the one table and hands back the same inbox: a schema per run would cost a migration each.
 * @param max the pool's size (the backend's client count)
 */
export function suiteInbox(backend: Backend, prefix: string, max: number): { fresh: () => Promise<PostgresInbox> } {
  let open: OpenDatabase;
  let db: SqlDatabase;
  let inbox: PostgresInbox;
  const schema = uniqueName(prefix).toLowerCase();
  beforeAll(async () => {
    open = await backend.open({ max });
    db = open.db;
    await migrate(db, inboxMigrations({ schema }));
    inbox = createPostgresInbox({ client: db, schema });
  });
  afterAll(async () => {
    await inbox?.close();
    await db?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await open?.close();
  });
  return {
    fresh: async () => {
      await db.query(`DELETE FROM "${schema}".webhook_inbox`);
      return inbox;
    },
  };
}
