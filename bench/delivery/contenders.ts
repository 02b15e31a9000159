// The two contenders of bench/delivery, each measured in one round: the worker delivering from the in-memory queue,
// and the limit, a bare keep-alive POST loop with the same concurrency and the same bytes.
import type { ChildProcess } from "node:child_process";
import { Agent } from "undici";
import type { DeliveryQueue } from "../../src/webhooks/delivery/delivery-queue";
import { buildDeliveryRequest } from "../../src/webhooks/delivery/delivery-request";
import { createEndpointAdmin } from "../../src/webhooks/delivery/endpoint-admin";
import type { EndpointStore } from "../../src/webhooks/delivery/endpoint-store";
import { createEvent } from "../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../src/webhooks/delivery/memory/index";
import { createDeliveryWorker } from "../../src/webhooks/delivery/node/index";

/** What one round measured. */
export interface Round {
  /** Requests (deliveries) per second, wall clock. */
  rate: number;
  /** CPU time of this process per request, in µs (user + system, every thread). */
  cpu: number;
  /** CPU time of the consumer process per request, in µs. */
  consumerCpu: number;
}

interface ConsumerStats {
  received: number;
  badSignatures: number;
  unique: number;
  cpuMicros: number;
}

/** The consumer process and the URL it listens on. */
export interface Target {
  consumer: ChildProcess;
  url: string;
}

/** Sends a message to the consumer and waits for its stats. */
export function ask(consumer: ChildProcess, message: object): Promise<ConsumerStats> {
  return new Promise((resolve) => {
    consumer.once("message", (reply) => resolve(reply as ConsumerStats));
    consumer.send(message);
  });
}

const urlPolicy = { allowHttp: true, allow: ["127.0.0.1"] };
const cpuMicros = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return used.user + used.system;
};

/** Where the endpoints and the queue live: in memory unless a round says otherwise. */
export type Stores = () => Promise<{ endpoints: EndpointStore; queue: DeliveryQueue }>;

const memoryStores: Stores = async () => {
  const endpoints = createMemoryEndpointStore();
  return { endpoints, queue: createMemoryDeliveryQueue({ endpoints }) };
};

// An endpoint in fresh stores; the consumer verifies with its secret.
async function freshEndpoint(target: Target, stores: Stores = memoryStores) {
  const { endpoints, queue } = await stores();
  const created = await createEndpointAdmin({ endpoints, queue, urlPolicy, resolve: false }).create({
    url: target.url,
    enabled_events: ["*"],
  });
  if (!created.ok) throw new Error("bench/delivery: endpoint refused");
  await ask(target.consumer, { type: "secret", secret: created.value.secrets[0]?.secret });
  return { endpoints, queue, endpoint: created.value };
}

/**
 * The limit: `concurrency` loops, each POSTing over a keep-alive agent as fast as answers come back, the same bytes
 * a delivery sends (body and Standard Webhooks headers, signed once with the endpoint's secret). The client is
 * undici's `Agent` with its `request` API, the faster of the two measured (undici.ts), as the issue asks.
 * `signEach`: each request is signed afresh, as a delivery is (its own `webhook-id`, the current second), by the
 * library's `buildDeliveryRequest`, and nothing else is added: the floor of any worker that signs what it sends.
 */
export async function bare(
  target: Target,
  concurrency: number,
  durationMs: number,
  { check = false, signEach = false }: { check?: boolean; signEach?: boolean } = {},
): Promise<Round> {
  const { endpoint } = await freshEndpoint(target);
  const event = createEvent({ type: "order.created", data: { id: "ord_0", total: 1999 } });
  const payload = JSON.stringify(event);
  const sample = buildDeliveryRequest({ eventId: event.id, payload }, endpoint, Date.now());
  const url = new URL(target.url);
  const agent = new Agent({ keepAliveTimeout: 60_000 });
  let signed = 0;
  const post = async () => {
    const request = signEach
      ? buildDeliveryRequest({ eventId: `${event.id}_${signed++}`, payload }, endpoint, Date.now())
      : sample;
    const res = await agent.request({
      origin: url.origin,
      path: url.pathname,
      method: "POST",
      headers: request.headers,
      body: request.body,
    });
    await res.body.dump();
    return res.statusCode;
  };
  if ((await post()) !== 200) throw new Error("bench/delivery: the consumer did not answer 200 to the bare loop");
  await ask(target.consumer, { type: "reset", check });
  let done = 0;
  let failed = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  const end = start + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        if ((await post()) !== 200) failed++;
        done++;
      }
    }),
  );
  const elapsed = performance.now() - start;
  const used = cpuMicros(cpu);
  await agent.close();
  const stats = await ask(target.consumer, { type: "stats" });
  if (
    failed > 0 ||
    stats.received !== done ||
    stats.badSignatures > 0 ||
    (check && signEach && stats.unique !== done)
  ) {
    throw new Error(
      `bare c=${concurrency}${signEach ? ", signing each" : ""}: ${done} sent, ${stats.received} received (${stats.unique} unique verified), ${failed} not 200`,
    );
  }
  return { rate: done / (elapsed / 1000), cpu: used / done, consumerCpu: stats.cpuMicros / done };
}

/**
 * Ours: `count` events published to the in-memory queue first, then the worker claims, signs, POSTs and records
 * them all; timed from start to drained. Every delivery must have arrived (and, in check mode, verified with a
 * unique event id) and be recorded as delivered.
 */
export async function delivery(
  target: Target,
  concurrency: number,
  count: number,
  check = false,
  stores: Stores = memoryStores,
): Promise<Round> {
  const { endpoints, queue, endpoint } = await freshEndpoint(target, stores);
  const worker = createDeliveryWorker({
    queue,
    endpoints,
    dispatcher: { urlPolicy },
    concurrency,
    endpointConcurrency: concurrency,
  });
  for (let i = 0; i < count; i++) {
    await queue.publish(createEvent({ type: "order.created", data: { id: `ord_${i}`, total: 1999 } }));
  }
  await ask(target.consumer, { type: "reset", check });
  const cpu = process.cpuUsage();
  const start = performance.now();
  worker.start();
  await worker.drained();
  const elapsed = performance.now() - start;
  const used = cpuMicros(cpu);
  await worker.stop();
  const stats = await ask(target.consumer, { type: "stats" });
  const delivered = (await queue.list(endpoint.id, { status: ["delivered"], limit: count })).length;
  if (
    stats.received !== count ||
    delivered !== count ||
    stats.badSignatures !== 0 ||
    (check && stats.unique !== count)
  ) {
    throw new Error(
      `delivery c=${concurrency}: ${count} published, ${stats.received} received (${stats.unique} unique verified), ${delivered} delivered, ${stats.badSignatures} bad signatures`,
    );
  }
  return { rate: count / (elapsed / 1000), cpu: used / count, consumerCpu: stats.cpuMicros / count };
}
