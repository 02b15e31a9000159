/** An in-memory OpenTelemetry SDK for one test file: spans and metrics kept in memory, read back by name. */
import { context, type Meter, type Tracer } from "@opentelemetry/api";
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
