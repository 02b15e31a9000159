// bench/delivery queue-vs-graphile (issue 15): deliveries/s drained from the PostgreSQL delivery queue to a loopback
// consumer by 1 and 2 worker processes, next to graphile-worker (the established PostgreSQL job queue) draining
// no-op jobs with 1 and 2 processes on the same database. Each side gets the same backlog, published first; the
// worker processes load first, and the clock runs from their common "go" to an empty queue (so a side's module
// loading is not counted as draining; connecting to the database is). Rounds alternate the two sides. Beside the
// rates, PostgreSQL's own CPU per delivery and per job (read from /proc when the server runs on this machine).
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
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
import { AS_BUILT } from "../support/as-built";

const connectionString = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const BACKLOG = Number(process.env.BENCH_QUEUE_BACKLOG ?? 16_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const QUEUE_SCHEMA = "bench_queue_ours";
const GRAPHILE_SCHEMA = "bench_queue_graphile";
const pool = new pg.Pool({ connectionString, max: 4 });
const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] as number;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

function start(role: "ours" | "graphile", env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...AS_BUILT, here("./queue-child.ts"), role], {
    env: { ...process.env, QUEUE_SCHEMA, GRAPHILE_SCHEMA, ...env },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    child.once("message", () => resolve(child));
    child.once("exit", (code) => reject(new Error(`${role} worker exited (${code})`)));
  });
}

/**
 * CPU time (user + system, µs) of every PostgreSQL server process this machine shows in /proc; `undefined` where there
 * is none (a remote server, or no /proc). Read while the workers' connections are still open, so their backends count.
 */
function postgresCpuMicros(): number | undefined {
  let ticks = 0;
  let found = false;
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // the process ended meanwhile
    }
    if (!stat.startsWith(`${entry} (postgres)`)) continue;
    // proc(5): after "pid (comm) ", field 3 is the state; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    ticks += Number(fields[11]) + Number(fields[12]);
    found = true;
  }
  // USER_HZ is 100 on Linux.
  return found ? ticks * 10_000 : undefined;
}

/** What one drain measured. */
interface Drain {
  /** Deliveries (or jobs) per second, from "go" to an empty queue. */
  rate: number;
  /** PostgreSQL's CPU per delivery (or job), µs; `undefined` when the server's processes are not visible. */
  pgCpu: number | undefined;
}

/** Starts the worker processes, lets them go together, and times them until `remaining` counts 0. */
async function drain(role: "ours" | "graphile", processes: number, remaining: string): Promise<Drain> {
  const children = await Promise.all(Array.from({ length: processes }, () => start(role)));
  const cpu = postgresCpuMicros();
  const started = performance.now();
  for (const child of children) child.send("go");
  const left = async () => Number((await pool.query(remaining)).rows[0].n);
  while ((await left()) > 0) await sleep(20);
  const rate = (BACKLOG * 1000) / (performance.now() - started);
  const used = postgresCpuMicros();
  await stopAll(children);
  return { rate, pgCpu: cpu === undefined || used === undefined ? undefined : (used - cpu) / BACKLOG };
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

const server = spawn(process.execPath, [...AS_BUILT, here("./isolation-server.ts")], {
  stdio: ["ignore", "inherit", "inherit", "ipc"],
});
const { healthy } = await new Promise<{ healthy: number }>((resolve) =>
  server.once("message", (m) => resolve(m as { healthy: number })),
);

async function ours(processes: number): Promise<Drain> {
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
  return drain(
    "ours",
    processes,
    `SELECT count(*)::int AS n FROM ${QUEUE_SCHEMA}.webhook_deliveries WHERE status <> 'delivered'`,
  );
}

async function graphile(processes: number): Promise<Drain> {
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
  return drain("graphile", processes, `SELECT count(*)::int AS n FROM ${GRAPHILE_SCHEMA}._private_jobs`);
}

const lines: string[] = [];
try {
  for (const processes of [1, 2]) {
    const a: Drain[] = [];
    const b: Drain[] = [];
    const pairs: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      let mine: Drain;
      let theirs: Drain;
      if (round % 2 === 0) {
        mine = await ours(processes);
        theirs = await graphile(processes);
      } else {
        theirs = await graphile(processes);
        mine = await ours(processes);
      }
      a.push(mine);
      b.push(theirs);
      pairs.push(mine.rate / theirs.rate);
    }
    const cpuOf = (drains: readonly Drain[]) => {
      const known = drains.flatMap((d) => (d.pgCpu === undefined ? [] : [d.pgCpu]));
      return known.length === 0 ? "?" : median(known).toFixed(0);
    };
    console.log(
      `postgres queue, ${processes} worker process${processes === 1 ? "" : "es"}: ours ${median(a.map((d) => d.rate)).toFixed(0)} deliveries/s (HTTP to a loopback consumer) · graphile-worker ${median(b.map((d) => d.rate)).toFixed(0)} no-op jobs/s (backlog ${BACKLOG}, median of ${ROUNDS}) · PostgreSQL CPU ${cpuOf(a)} µs per delivery vs ${cpuOf(b)} µs per job`,
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
