// bench/delivery isolation (issue 15): a healthy endpoint beside 8 endpoints that never answer, against the healthy
// endpoint alone, with the worker's default settings (64 slots, 16 per endpoint at most, 15 s time-out: the hanging
// attempts never end during a round). Throughput: a backlog to the healthy endpoint drained, deliveries/s. Latency:
// a steady 200 events/s to the healthy endpoint, publish → delivered, p50/p99. Rounds alternate alone / beside.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createEndpointAdmin } from "../../src/webhooks/delivery/endpoint-admin";
import { createEvent } from "../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../src/webhooks/delivery/memory/index";
import { createDeliveryWorker } from "../../src/webhooks/delivery/node/index";
import { AS_BUILT } from "../support/as-built";

const HANGING = 8;
const BACKLOG = Number(process.env.BENCH_ISOLATION_BACKLOG ?? 4_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const STEADY_PER_S = 200;
const STEADY_MS = 3_000;
const urlPolicy = { allowHttp: true, allow: ["127.0.0.1"] };

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] as number;
const quantile = (values: readonly number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const server = spawn(
  process.execPath,
  [...AS_BUILT, fileURLToPath(new URL("./isolation-server.ts", import.meta.url))],
  {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  },
);
const ports = await new Promise<{ healthy: number; hanging: number }>((resolve) =>
  server.once("message", (m) => resolve(m as { healthy: number; hanging: number })),
);

/** One world: a worker, the healthy endpoint, and (beside) 8 hanging ones each with a backlog. */
async function world(beside: boolean) {
  const endpoints = createMemoryEndpointStore();
  const queue = createMemoryDeliveryQueue({ endpoints });
  const admin = createEndpointAdmin({ endpoints, queue, urlPolicy, resolve: false });
  const healthy = await admin.create({ url: `http://127.0.0.1:${ports.healthy}/in`, enabled_events: ["fast.*"] });
  if (!healthy.ok) throw new Error("endpoint refused");
  if (beside) {
    for (let i = 0; i < HANGING; i++) {
      const made = await admin.create({
        url: `http://127.0.0.1:${ports.hanging}/dead/${i}`,
        enabled_events: ["slow.*"],
      });
      if (!made.ok) throw new Error("endpoint refused");
    }
    for (let i = 0; i < 200; i++) await queue.publish(createEvent({ type: "slow.created", data: { i } }));
  }
  const delivered: number[] = [];
  const worker = createDeliveryWorker({
    queue,
    endpoints,
    dispatcher: { urlPolicy },
    stopGraceMs: 0,
    onEvent: (event) => {
      if (event.type === "attempt" && event.delivery.state.status === "delivered") {
        delivered.push(Date.now() - event.delivery.createdAt);
      }
    },
  });
  worker.start();
  // Let the hanging endpoints take what they can before the healthy one is measured.
  if (beside) await sleep(200);
  return { queue, worker, delivered };
}

async function throughput(beside: boolean): Promise<number> {
  const { queue, worker, delivered } = await world(beside);
  for (let i = 0; i < BACKLOG; i++) await queue.publish(createEvent({ type: "fast.created", data: { i } }));
  const started = performance.now();
  worker.wake();
  while (delivered.length < BACKLOG) await sleep(2);
  const rate = (BACKLOG * 1000) / (performance.now() - started);
  await worker.stop();
  return rate;
}

async function latency(beside: boolean): Promise<number[]> {
  const { queue, worker, delivered } = await world(beside);
  const count = (STEADY_PER_S * STEADY_MS) / 1000;
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    await queue.publish(createEvent({ type: "fast.created", data: { i } }));
    const due = started + ((i + 1) * 1000) / STEADY_PER_S;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
  }
  while (delivered.length < count) await sleep(2);
  await worker.stop();
  return delivered;
}

try {
  await throughput(false); // warm-up
  await throughput(true);
  const alone: number[] = [];
  const besides: number[] = [];
  const pairs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const a = round % 2 === 0 ? await throughput(false) : 0;
    const b = await throughput(true);
    const a2 = round % 2 === 0 ? a : await throughput(false);
    alone.push(a2);
    besides.push(b);
    pairs.push(b / a2);
  }
  console.log(
    `isolation: healthy endpoint alone ${median(alone).toFixed(0)} deliveries/s · beside ${HANGING} hanging ${median(besides).toFixed(0)} deliveries/s (backlog ${BACKLOG}, median of ${ROUNDS} alternating rounds)`,
  );
  const steadyAlone = await latency(false);
  const steadyBeside = await latency(true);
  const p99Alone = quantile(steadyAlone, 0.99);
  const p99Beside = quantile(steadyBeside, 0.99);
  console.log(
    `p99: healthy alone = ${p99Alone} ms, beside ${HANGING} hanging = ${p99Beside} ms (ratio ${(p99Beside / Math.max(1, p99Alone)).toFixed(2)}, target <= 2; p50 ${quantile(steadyAlone, 0.5)} / ${quantile(steadyBeside, 0.5)} ms; ${STEADY_PER_S} events/s for ${STEADY_MS / 1000} s)`,
  );
  console.log(`ratio: healthy endpoint beside ${HANGING} hanging vs healthy alone = ${median(pairs).toFixed(2)}`);
} finally {
  server.kill();
}
process.exit(0);
