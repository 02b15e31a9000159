// bench/delivery queue-vs-graphile (issue 15): deliveries/s drained from the PostgreSQL delivery queue to a loopback
// consumer by 1 and 2 worker processes, next to graphile-worker (the established PostgreSQL job queue) draining
// no-op jobs with 1 and 2 processes on the same database. Each side gets the same backlog, published first; the
// clock runs from the workers' start to an empty queue. Rounds alternate the two sides.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { makeWorkerUtils, runMigrations } from "graphile-worker";
import pg from "pg";
import { migrate } from "../../src/postgres/index";
import { createEndpointAdmin } from "../../src/webhooks/delivery/endpoint-admin";
import { createEvent } from "../../src/webhooks/delivery/event";
import {
  createPostgresDeliveryQueue,
  createPostgresEndpointStore,
  deliveryMigrations,
} from "../../src/webhooks/delivery/postgres/index";

const connectionString = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const BACKLOG = Number(process.env.BENCH_QUEUE_BACKLOG ?? 4_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const QUEUE_SCHEMA = "bench_queue_ours";
const GRAPHILE_SCHEMA = "bench_queue_graphile";
const pool = new pg.Pool({ connectionString, max: 4 });
const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] as number;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

function start(role: "ours" | "graphile", env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", here("./queue-child.ts"), role], {
    env: { ...process.env, QUEUE_SCHEMA, GRAPHILE_SCHEMA, ...env },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    child.once("message", () => resolve(child));
    child.once("exit", (code) => reject(new Error(`${role} worker exited (${code})`)));
  });
}

async function stopAll(children: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once("exit", () => resolve());
          child.disconnect();
        }),
    ),
  );
}

const server = spawn(process.execPath, ["--import", "tsx", here("./isolation-server.ts")], {
  stdio: ["ignore", "inherit", "inherit", "ipc"],
});
const { healthy } = await new Promise<{ healthy: number }>((resolve) =>
  server.once("message", (m) => resolve(m as { healthy: number })),
);

async function ours(processes: number): Promise<number> {
  await pool.query(`DROP SCHEMA IF EXISTS ${QUEUE_SCHEMA} CASCADE`);
  await migrate(pool, deliveryMigrations({ schema: QUEUE_SCHEMA }));
  const endpoints = createPostgresEndpointStore({ client: pool, schema: QUEUE_SCHEMA });
  const queue = createPostgresDeliveryQueue({ client: pool, schema: QUEUE_SCHEMA });
  const admin = createEndpointAdmin({
    endpoints,
    queue,
    urlPolicy: { allowHttp: true, allow: ["127.0.0.1"] },
    resolve: false,
  });
  const made = await admin.create({ url: `http://127.0.0.1:${healthy}/in`, enabled_events: ["*"] });
  if (!made.ok) throw new Error("endpoint refused");
  for (let i = 0; i < BACKLOG; i++) await queue.publish(createEvent({ type: "order.created", data: { i } }));
  const started = performance.now();
  const children = await Promise.all(Array.from({ length: processes }, () => start("ours")));
  const left = async () =>
    Number(
      (
        await pool.query(
          `SELECT count(*)::int AS n FROM ${QUEUE_SCHEMA}.webhook_deliveries WHERE status <> 'delivered'`,
        )
      ).rows[0].n,
    );
  while ((await left()) > 0) await sleep(20);
  const rate = (BACKLOG * 1000) / (performance.now() - started);
  await stopAll(children);
  return rate;
}

async function graphile(processes: number): Promise<number> {
  await pool.query(`DROP SCHEMA IF EXISTS ${GRAPHILE_SCHEMA} CASCADE`);
  await runMigrations({ connectionString, schema: GRAPHILE_SCHEMA });
  const utils = await makeWorkerUtils({ connectionString, schema: GRAPHILE_SCHEMA });
  try {
    for (let i = 0; i < BACKLOG; i += 500) {
      await utils.addJobs(
        Array.from({ length: Math.min(500, BACKLOG - i) }, (_, k) => ({ identifier: "noop", payload: { i: i + k } })),
      );
    }
  } finally {
    await utils.release();
  }
  const started = performance.now();
  const children = await Promise.all(Array.from({ length: processes }, () => start("graphile")));
  const left = async () =>
    Number((await pool.query(`SELECT count(*)::int AS n FROM ${GRAPHILE_SCHEMA}._private_jobs`)).rows[0].n);
  while ((await left()) > 0) await sleep(20);
  const rate = (BACKLOG * 1000) / (performance.now() - started);
  await stopAll(children);
  return rate;
}

const lines: string[] = [];
try {
  for (const processes of [1, 2]) {
    const a: number[] = [];
    const b: number[] = [];
    const pairs: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      let mine: number;
      let theirs: number;
      if (round % 2 === 0) {
        mine = await ours(processes);
        theirs = await graphile(processes);
      } else {
        theirs = await graphile(processes);
        mine = await ours(processes);
      }
      a.push(mine);
      b.push(theirs);
      pairs.push(mine / theirs);
    }
    console.log(
      `postgres queue, ${processes} worker process${processes === 1 ? "" : "es"}: ours ${median(a).toFixed(0)} deliveries/s (HTTP to a loopback consumer) · graphile-worker ${median(b).toFixed(0)} no-op jobs/s (backlog ${BACKLOG}, median of ${ROUNDS})`,
    );
    lines.push(
      `ratio: postgres queue vs graphile-worker (${processes} process${processes === 1 ? "" : "es"}) = ${median(pairs).toFixed(2)}`,
    );
  }
} finally {
  server.kill();
  await pool.query(`DROP SCHEMA IF EXISTS ${QUEUE_SCHEMA} CASCADE`);
  await pool.query(`DROP SCHEMA IF EXISTS ${GRAPHILE_SCHEMA} CASCADE`);
  await pool.end();
}
for (const line of lines) console.log(line);
process.exit(0);
