import {
  type Context,
  type Meter,
  metrics,
  type SpanContext,
  TraceFlags,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { isTraceparent } from "../webhooks/delivery/trace-context";

/** The instrumentation scope every tracer and meter of this package is named after. */
export const INSTRUMENTATION_SCOPE = "rest-webhooks";

/**
 * Where the instrumentation reports: a tracer and a meter, by default the global ones (`trace.getTracer`,
 * `metrics.getMeter` of `@opentelemetry/api`). With no SDK registered those are no-ops, so nothing is recorded.
 */
export interface TelemetryOptions {
  /** @default trace.getTracer("rest-webhooks") */
  tracer?: Tracer;
  /**
   * Read once, when the instrumentation is made: register the SDK's meter provider before.
   * @default metrics.getMeter("rest-webhooks")
   */
  meter?: Meter;
}

/** The tracer and meter of a {@link TelemetryOptions} (internal). */
export interface Telemetry {
  readonly tracer: Tracer;
  readonly meter: Meter;
}

/** Applies the defaults of {@link TelemetryOptions} (internal). */
export function telemetryOf(options: TelemetryOptions = {}, where = "rest-webhooks/otel"): Telemetry {
  if (typeof options !== "object" || options === null) throw new TypeError(`${where}: options must be an object`);
  return {
    tracer: options.tracer ?? trace.getTracer(INSTRUMENTATION_SCOPE),
    meter: options.meter ?? metrics.getMeter(INSTRUMENTATION_SCOPE),
  };
}

/**
 * The W3C `traceparent` of a span context (https://www.w3.org/TR/trace-context/ §3.2.2: version 00), or `undefined`
 * for an invalid context (no SDK registered: nothing to continue).
 */
export function formatTraceparent(spanContext: SpanContext): string | undefined {
  if (!trace.isSpanContextValid(spanContext)) return undefined;
  const flags = (spanContext.traceFlags & 0xff).toString(16).padStart(2, "0");
  return `00-${spanContext.traceId}-${spanContext.spanId}-${flags}`;
}

/** The remote span context a `traceparent` names, or `undefined` when the value is not one (§3.2.2). */
export function parseTraceparent(value: string | undefined): SpanContext | undefined {
  if (value === undefined || !isTraceparent(value)) return undefined;
  // §3.2.2.5: only the sampled bit is defined; other bits are kept as received.
  return {
    traceId: value.slice(3, 35),
    spanId: value.slice(36, 52),
    traceFlags: Number.parseInt(value.slice(53, 55), 16) || TraceFlags.NONE,
    isRemote: true,
  };
}

/** `parent` with the remote span `traceparent` names as its span, or `parent` itself when there is none. */
export function contextWithTraceparent(parent: Context, value: string | undefined): Context {
  const remote = parseTraceparent(value);
  return remote === undefined ? parent : trace.setSpanContext(parent, remote);
}

/** Epoch ms as seconds, the unit of OpenTelemetry duration histograms (semantic conventions, "Metrics"). */
export const seconds = (ms: number): number => ms / 1000;
