// bench/delivery queue-vs-graphile (issue 15): one worker process. argv[2] "ours": the delivery worker on the
// PostgreSQL queue (schema QUEUE_SCHEMA), concurrency 16, sending to the loopback consumer; "graphile": graphile-worker
// (schema GRAPHILE_SCHEMA) running no-op jobs, concurrency 16. Each loads its modules, says "ready", and starts working
// on the parent's "go" (so the drain is timed without the process's start-up); both stop when their parent disconnects.
import pg from "pg";
import { createDeliveryWorker } from "../../src/webhooks/delivery/node/index";
import { createPostgresDeliveryQueue, createPostgresEndpointStore } from "../../src/webhooks/delivery/postgres/index";

const connectionString = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const CONCURRENCY = 16;

const go = () => new Promise<void>((resolve) => process.once("message", () => resolve()));

if (process.argv[2] === "ours") {
  const pool = new pg.Pool({ connectionString, max: 8 });
  const schema = String(process.env.QUEUE_SCHEMA);
  const worker = createDeliveryWorker({
    queue: createPostgresDeliveryQueue({ client: pool, schema }),
    endpoints: createPostgresEndpointStore({ client: pool, schema }),
    dispatcher: { urlPolicy: { allowHttp: true, allow: ["127.0.0.1"] } },
    concurrency: CONCURRENCY,
    endpointConcurrency: CONCURRENCY,
    pollIntervalMs: 50,
  });
  process.send?.("ready");
  await go();
  worker.start();
  process.on("disconnect", () => void worker.stop().finally(() => process.exit(0)));
} else {
  const { run } = await import("graphile-worker");
  process.send?.("ready");
  await go();
  const runner = await run({
    connectionString,
    schema: String(process.env.GRAPHILE_SCHEMA),
    concurrency: CONCURRENCY,
    pollInterval: 50,
    noHandleSignals: true,
    logger: undefined,
    maxPoolSize: CONCURRENCY + 1,
    taskList: { noop: async () => {} },
  });
  process.on("disconnect", () => void runner.stop().finally(() => process.exit(0)));
}
