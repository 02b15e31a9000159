// bench/delivery undici (issue 15): undici's Agent against node:http's keep-alive Agent, as a bare POST loop and as the
// worker's dispatcher, at c=1/16/64, to a loopback consumer that answers 200 at once (isolation-server.ts's healthy
// port). The library's dispatcher is on undici since this bench (issue 15); the node:http one here is bench-only: the
// same time-out and response cap, no SSRF lookup (the URL is an IP literal, which neither client resolves). Rounds
// alternate the two clients; the ratio is undici / node:http.
import { spawn } from "node:child_process";
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { fileURLToPath } from "node:url";
import { Agent as UndiciAgent } from "undici";
import type { AttemptResult } from "../../src/webhooks/delivery/attempt";
import { createEndpointAdmin } from "../../src/webhooks/delivery/endpoint-admin";
import { createEvent } from "../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../src/webhooks/delivery/memory/index";
import { createDeliveryWorker, type Dispatcher } from "../../src/webhooks/delivery/node/index";
import { AS_BUILT } from "../support/as-built";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const REQUESTS = Number(process.env.BENCH_UNDICI_REQUESTS ?? 3_000);
const body = JSON.stringify({ id: "evt_1", type: "order.created", data: { id: "ord_1", total: 1999 } });
const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] as number;

const server = spawn(
  process.execPath,
  [...AS_BUILT, fileURLToPath(new URL("./isolation-server.ts", import.meta.url))],
  {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  },
);
const { healthy } = await new Promise<{ healthy: number }>((resolve) =>
  server.once("message", (m) => resolve(m as { healthy: number })),
);
const origin = `http://127.0.0.1:${healthy}`;

function nodeLoop(concurrency: number): Promise<number> {
  const agent = new HttpAgent({ keepAlive: true, maxFreeSockets: 256 });
  const post = () =>
    new Promise<void>((resolve, reject) => {
      const req = httpRequest(
        `${origin}/in`,
        {
          method: "POST",
          agent,
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on("end", resolve);
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  return timed(concurrency, post).finally(() => agent.destroy());
}

function undiciLoop(concurrency: number): Promise<number> {
  const agent = new UndiciAgent({ keepAliveTimeout: 60_000 });
  const post = async () => {
    const res = await agent.request({
      origin,
      path: "/in",
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    await res.body.text();
  };
  return timed(concurrency, post).finally(() => agent.close());
}

async function timed(concurrency: number, post: () => Promise<void>): Promise<number> {
  let left = REQUESTS;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) await post();
    }),
  );
  return (REQUESTS * 1000) / (performance.now() - started);
}

/**
 * A bench-only Dispatcher on node:http's keep-alive Agent, as the library's was up to 0.x (issue 15): POST, a
 * time-out per attempt, at most 1 KiB of the body kept; no SSRF lookup (the URL is an IP literal).
 */
function nodeHttpDispatcher(timeoutMs = 15_000): Dispatcher {
  const agent = new HttpAgent({ keepAlive: true, maxFreeSockets: 256, scheduling: "lifo" });
  return {
    dispatch(request, options): Promise<AttemptResult> {
      const started = performance.now();
      return new Promise((resolve) => {
        const req = httpRequest(request.url, {
          method: "POST",
          agent,
          headers: { ...request.headers, "content-length": Buffer.byteLength(request.body) },
          signal: options?.signal,
          timeout: timeoutMs,
        });
        req.on("timeout", () => req.destroy(new Error("timeout")));
        req.on("response", (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () =>
            resolve({
              kind: "response",
              status: res.statusCode ?? 0,
              body: Buffer.concat(chunks).toString("utf8", 0, 1_024),
              durationMs: performance.now() - started,
            }),
          );
        });
        req.on("error", (error) =>
          resolve({
            kind: "error",
            errorKind: "network",
            message: String(error),
            durationMs: performance.now() - started,
          }),
        );
        req.end(request.body);
      });
    },
    close() {
      agent.destroy();
    },
  };
}

async function worker(concurrency: number, dispatcher: Dispatcher | undefined): Promise<number> {
  const endpoints = createMemoryEndpointStore();
  const queue = createMemoryDeliveryQueue({ endpoints });
  const urlPolicy = { allowHttp: true, allow: ["127.0.0.1"] };
  const admin = createEndpointAdmin({ endpoints, queue, urlPolicy, resolve: false });
  const made = await admin.create({ url: `${origin}/in`, enabled_events: ["*"] });
  if (!made.ok) throw new Error("endpoint refused");
  for (let i = 0; i < REQUESTS; i++) await queue.publish(createEvent({ type: "order.created", data: { i } }));
  const w = createDeliveryWorker({
    queue,
    endpoints,
    concurrency,
    endpointConcurrency: concurrency,
    dispatcher: dispatcher ?? { urlPolicy },
  });
  const started = performance.now();
  w.start();
  await w.drained();
  const rate = (REQUESTS * 1000) / (performance.now() - started);
  await w.stop();
  dispatcher?.close();
  const delivered = (await queue.list(made.value.id, { status: ["delivered"], limit: REQUESTS })).length;
  if (delivered !== REQUESTS) throw new Error(`undici bench: ${delivered} of ${REQUESTS} delivered`);
  return rate;
}

const lines: string[] = [];
try {
  for (const c of [1, 16, 64]) {
    await nodeLoop(c);
    await undiciLoop(c);
    const loops: number[] = [];
    const workers: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const [n, u] = round % 2 === 0 ? [await nodeLoop(c), await undiciLoop(c)] : [0, await undiciLoop(c)];
      const n2 = round % 2 === 0 ? n : await nodeLoop(c);
      loops.push(u / n2);
      const [wu, wn] = [await worker(c, undefined), await worker(c, nodeHttpDispatcher())];
      workers.push(wu / wn);
    }
    lines.push(`ratio: bare undici loop vs bare node:http loop (c=${c}) = ${median(loops).toFixed(2)}`);
    lines.push(`ratio: createDispatcher (undici) vs a node:http dispatcher (c=${c}) = ${median(workers).toFixed(2)}`);
  }
} finally {
  server.kill();
}
for (const line of lines) console.log(line);
process.exit(0);
