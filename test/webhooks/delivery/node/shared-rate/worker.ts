// A delivery worker process on the shared PostgreSQL queue, with the worker's defaults for pacing (issue 15): the
// per-endpoint rate limit comes from the queue's shared store, so every process shares each endpoint's rate.
import pg from "pg";
import { createDeliveryWorker } from "../../../../../src/webhooks/delivery/node/index";
import {
  createPostgresDeliveryQueue,
  createPostgresEndpointStore,
} from "../../../../../src/webhooks/delivery/postgres/index";

const schema = String(process.env.RATE_SCHEMA);
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4 });
pool.on("error", () => {});
const worker = createDeliveryWorker({
  queue: createPostgresDeliveryQueue({ client: pool, schema }),
  endpoints: createPostgresEndpointStore({ client: pool, schema }),
  dispatcher: { urlPolicy: { allowHttp: true, allow: ["127.0.0.1"] }, timeoutMs: 2_000 },
  pollIntervalMs: 100,
  onEvent: (event) => {
    if (event.type === "error") console.error("worker error", event.error);
  },
});
worker.start();
process.send?.("ready");
process.on("disconnect", () => process.exit(0));
