/** An in-memory OpenTelemetry SDK for one test file: spans and metrics kept in memory, read back by name. */
import { context, createNoopMeter, type Meter, type Tracer } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace-base";

export interface OtelFixture {
  tracer: Tracer;
  meter: Meter;
  spans(): ReadableSpan[];
  /** The summed data points of a counter (or histogram counts) per attribute set, as `[attributes, value]`. */
  points(name: string): Promise<{ attributes: Record<string, unknown>; value: number }[]>;
  reset(): void;
  close(): Promise<void>;
}

export function otelFixture(): OtelFixture {
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // Collected on forceFlush only: the interval is never reached in a test.
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    tracer: tracerProvider.getTracer("test"),
    meter: meterProvider.getMeter("test"),
    spans: () => spanExporter.getFinishedSpans(),
    async points(name) {
      metricExporter.reset();
      await meterProvider.forceFlush();
      const last = metricExporter.getMetrics().at(-1);
      const metric = last?.scopeMetrics.flatMap((scope) => scope.metrics).find((m) => m.descriptor.name === name);
      return (metric?.dataPoints ?? []).map((point) => ({
        attributes: { ...point.attributes },
        value: typeof point.value === "number" ? point.value : (point.value as { count: number }).count,
      }));
    },
    reset() {
      spanExporter.reset();
    },
    async close() {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
      context.disable();
    },
  };
}

/**
 * A tracer and meter that fail the way a buggy SDK part does: a span processor throwing from `onStart` or `onEnd`
 * (the SDK passes that on to the caller), or instruments whose `add` and `record` throw.
 */
export function throwingTelemetry(part: "onStart" | "onEnd" | "meter"): { tracer: Tracer; meter: Meter } {
  const fail = () => {
    throw new Error(`telemetry bug (${part})`);
  };
  const processor: SpanProcessor = {
    onStart: part === "onStart" ? fail : () => {},
    onEnd: part === "onEnd" ? fail : () => {},
    forceFlush: async () => {},
    shutdown: async () => {},
  };
  const tracer = new BasicTracerProvider({ spanProcessors: [processor] }).getTracer("throwing");
  // createNoopMeter returns the API's one shared no-op meter, which the SDK itself uses: the throwing instruments go
  // on an object of this test's own that inherits the rest from it.
  const meter: Meter = Object.create(createNoopMeter());
  if (part === "meter") {
    const instrument = { add: fail, record: fail };
    Object.assign(meter, { createCounter: () => instrument, createHistogram: () => instrument });
  }
  return { tracer, meter };
}
