// bench/delivery, OpenTelemetry: the worker's own CPU per delivery (no sockets, a dispatcher answering 200 at once)
// without a listener, and with `deliveryTelemetry()` from rest-webhooks/otel as its listener:
// - with only @opentelemetry/api present (no SDK registered: every span and instrument is the API's no-op);
// - with the SDK (a tracer provider with a batch processor and a meter provider with a reader, both exporting to a
//   no-op exporter), passed explicitly so nothing is registered globally.
// Rounds alternate the pair (ABBA); the ratio is the median of per-round ratios of CPU per delivery (theirs ÷ ours:
// the throughput ratio).
// Run alone: node --expose-gc --import ./bench/support/as-built-loader.mjs bench/delivery/otel.ts

import { fileURLToPath } from "node:url";
import type { Meter, Tracer } from "@opentelemetry/api";
import { ExportResultCode } from "@opentelemetry/core";
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { deliveryTelemetry, tracedPublish } from "../../src/otel/index";
import type { AttemptResult } from "../../src/webhooks/delivery/attempt";
import { createEndpointAdmin } from "../../src/webhooks/delivery/endpoint-admin";
import { createEvent } from "../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../src/webhooks/delivery/memory/index";
import { createDeliveryWorker, type DeliveryWorkerEvent } from "../../src/webhooks/delivery/node/index";

const answer: AttemptResult = { kind: "response", status: 200, body: "ok", durationMs: 0 };
const COUNT = Number(process.env.BENCH_OTEL_COUNT ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] as number;

/** CPU µs per delivery of one worker run over `count` deliveries at concurrency 64, without HTTP. */
async function run(count: number, listener?: (event: DeliveryWorkerEvent) => void, tracer?: Tracer): Promise<number> {
  const endpoints = createMemoryEndpointStore();
  const queue = createMemoryDeliveryQueue({ endpoints });
  const admin = createEndpointAdmin({
    endpoints,
    queue,
    urlPolicy: { allowHttp: true, allow: ["127.0.0.1"] },
    resolve: false,
  });
  const created = await admin.create({ url: "http://127.0.0.1:9/hooks", enabled_events: ["*"] });
  if (!created.ok) throw new Error("bench/delivery otel: endpoint refused");
  let sent = 0;
  let attempts = 0;
  const worker = createDeliveryWorker({
    queue,
    endpoints,
    concurrency: 64,
    endpointConcurrency: 64,
    dispatcher: {
      dispatch: async () => {
        sent++;
        return answer;
      },
      close() {},
    },
    ...(listener === undefined
      ? {}
      : {
          onEvent: (event: DeliveryWorkerEvent) => {
            if (event.type === "attempt") attempts++;
            listener(event);
          },
        }),
  });
  // Publishing is not timed; with a tracer it goes through tracedPublish so the deliveries carry a traceparent.
  const publish =
    tracer === undefined
      ? (e: Parameters<typeof queue.publish>[0]) => queue.publish(e)
      : tracedPublish(queue, { tracer });
  for (let i = 0; i < count; i++)
    await publish(createEvent({ type: "order.created", data: { id: `ord_${i}`, total: 1999 } }));
  // The previous run's queue is garbage now: collect it here, not inside the timed part of this run.
  (globalThis as { gc?: () => void }).gc?.();
  const cpu = process.cpuUsage();
  worker.start();
  await worker.drained();
  const used = process.cpuUsage(cpu);
  await worker.stop();
  // Correctness: every delivery sent once, and the listener told of each attempt.
  if (sent !== count || (listener !== undefined && attempts !== count)) {
    throw new Error(`bench/delivery otel: ${sent} sent, ${attempts} attempts reported of ${count}`);
  }
  return (used.user + used.system) / count;
}

/** A paired, alternating comparison; returns the throughput ratio (uninstrumented CPU ÷ instrumented CPU). */
async function compare(
  label: string,
  listener: (event: DeliveryWorkerEvent) => void,
  tracer?: Tracer,
): Promise<string> {
  await run(COUNT / 2);
  await run(COUNT / 2, listener, tracer);
  const plain: number[] = [];
  const traced: number[] = [];
  const pairs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      plain.push(await run(COUNT));
      traced.push(await run(COUNT, listener, tracer));
    } else {
      traced.push(await run(COUNT, listener, tracer));
      plain.push(await run(COUNT));
    }
    pairs.push((plain[round] as number) / (traced[round] as number));
  }
  console.log(
    `worker c=64, ${label}: ${median(traced).toFixed(1)} µs CPU per delivery instrumented, ${median(plain).toFixed(1)} µs uninstrumented (median of ${ROUNDS} alternating rounds × ${COUNT.toLocaleString("en")})`,
  );
  return `ratio: delivery worker instrumented (${label}) vs uninstrumented = ${median(pairs).toFixed(2)}`;
}

class NoopSpanExporter implements SpanExporter {
  export(_spans: unknown, done: (result: { code: ExportResultCode }) => void): void {
    done({ code: ExportResultCode.SUCCESS });
  }
  async shutdown(): Promise<void> {}
}

const noopMetricExporter: PushMetricExporter = {
  export: (_metrics, done) => done({ code: ExportResultCode.SUCCESS }),
  forceFlush: async () => {},
  shutdown: async () => {},
};

/** Both comparisons; returns their `ratio:` lines. */
export async function otelOverhead(): Promise<string[]> {
  const lines: string[] = [];
  // API only first: the SDK run below must not warm the instrumented code with recording spans before it.
  lines.push(await compare("API, no SDK", deliveryTelemetry()));
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new NoopSpanExporter())] });
  const meterProvider = new MeterProvider({
    readers: [new PeriodicExportingMetricReader({ exporter: noopMetricExporter, exportIntervalMillis: 1_000 })],
  });
  const tracer = tracerProvider.getTracer("bench");
  const meter: Meter = meterProvider.getMeter("bench");
  try {
    lines.push(await compare("SDK, no-op exporter", deliveryTelemetry({ tracer, meter }), tracer));
  } finally {
    await tracerProvider.shutdown();
    await meterProvider.shutdown();
  }
  return lines;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const line of await otelOverhead()) console.log(line);
}
