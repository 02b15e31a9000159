// Chaos worker (child process): a delivery worker on the shared PostgreSQL queue; the test SIGKILLs it at random.
import pg from "pg";
import { createDeliveryWorker } from "../../../../../src/webhooks/delivery/node/index";
import {
  createPostgresDeliveryQueue,
  createPostgresEndpointStore,
} from "../../../../../src/webhooks/delivery/postgres/index";
import { exponentialBackoff } from "../../../../../src/webhooks/retry/backoff";

const schema = String(process.env.CHAOS_SCHEMA);
// A completion lost to a database crash only means one more delivery (at least once), so commits need not wait
// for the WAL flush: the tuning docs/webhooks-providers.md suggests for busy workers.
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 8, options: "-c synchronous_commit=off" });
pool.on("error", () => {});
const worker = createDeliveryWorker({
  queue: createPostgresDeliveryQueue({ client: pool, schema }),
  endpoints: createPostgresEndpointStore({ client: pool, schema }),
  dispatcher: { urlPolicy: { allowHttp: true, allow: ["127.0.0.1"] }, timeoutMs: 200 },
  retry: exponentialBackoff({ baseMs: 5, capMs: 100, maxAttempts: 1_000 }),
  circuit: false,
  concurrency: 48,
  endpointConcurrency: 48,
  leaseMs: 1_500,
  pollIntervalMs: 25,
  onEvent: (event) => {
    if (event.type === "error") console.error("worker error", event.error);
  },
});
worker.start();
process.on("disconnect", () => process.exit(0));
