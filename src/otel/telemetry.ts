import {
  type Attributes,
  type Context,
  createTraceState,
  INVALID_SPAN_CONTEXT,
  type Meter,
  metrics,
  type Span,
  type SpanContext,
  type SpanOptions,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { isKnownMethod } from "../http/methods";
import { isTraceparent, KNOWN_TRACE_FLAGS, truncateTracestate } from "../webhooks/delivery/trace-context";
import { ATTRIBUTES as A } from "./names";

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

/** Applies the defaults of {@link TelemetryOptions} and refuses a tracer or meter that is not one (internal). */
export function telemetryOf(options: TelemetryOptions = {}, where = "rest-webhooks/otel"): Telemetry {
  if (typeof options !== "object" || options === null) throw new TypeError(`${where}: options must be an object`);
  // A tracer without startSpan was taken, and every span then failed to start, quietly: nothing was ever recorded.
  if (options.tracer !== undefined && typeof options.tracer?.startSpan !== "function") {
    throw new TypeError(`${where}: options.tracer must be a Tracer of @opentelemetry/api (it has startSpan)`);
  }
  if (options.meter !== undefined && typeof options.meter?.createCounter !== "function") {
    throw new TypeError(`${where}: options.meter must be a Meter of @opentelemetry/api (it has createCounter)`);
  }
  return {
    tracer: options.tracer ?? trace.getTracer(INSTRUMENTATION_SCOPE),
    meter: options.meter ?? metrics.getMeter(INSTRUMENTATION_SCOPE),
  };
}

/**
 * Runs telemetry calls (attributes, status, counters, `span.end()`) and swallows what they throw: a tracer, meter or
 * span processor that fails must not fail the request, publish or processing it observes (internal).
 */
export function quietly(record: () => void): void {
  try {
    record();
  } catch {
    // Telemetry must not change behaviour.
  }
}

/** Marks `span` failed by `error`: status ERROR, `error.type` (the error's name, else `_OTHER`), the exception. */
export function markFailed(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute(A.errorType, error instanceof Error ? error.name : "_OTHER");
  if (error instanceof Error) span.recordException(error);
}

/** Whether the HTTP semantic conventions know `method` (case-sensitive): the RFC 9110 methods, PATCH and QUERY. */
export function isConventionMethod(method: string): boolean {
  return isKnownMethod(method) || method === "QUERY";
}

/**
 * `http.request.method` of a request: the method when the HTTP semantic conventions know it (case-sensitive), else
 * `_OTHER` with the method as sent in `http.request.method_original`, so a client's made-up methods stay out of it.
 */
export function methodAttributes(method: string): Attributes {
  return isConventionMethod(method)
    ? { [A.httpMethod]: method }
    : { [A.httpMethod]: "_OTHER", [A.httpMethodOriginal]: method };
}

/** `tracer.startSpan`, or a non-recording span when the tracer (or a span processor's `onStart`) throws (internal). */
export function startSpanQuietly(tracer: Tracer, name: string, options: SpanOptions, parent?: Context): Span {
  try {
    return tracer.startSpan(name, options, parent);
  } catch {
    return trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
  }
}

/**
 * The W3C `traceparent` of a span context (https://www.w3.org/TR/trace-context/ §3.2.2: version 00), or `undefined`
 * for an invalid context (no SDK registered: nothing to continue). The ids are written in lower case, the flags no
 * level defines zero (§3.2.2.5, "Other Flags": "Vendors MUST set those to zero").
 */
export function formatTraceparent(spanContext: SpanContext): string | undefined {
  if (!trace.isSpanContextValid(spanContext)) return undefined;
  const flags = (spanContext.traceFlags & KNOWN_TRACE_FLAGS).toString(16).padStart(2, "0");
  // §3.2.2.3–4: lower-case hex. The API takes upper-case ids as valid, and a span keeps its parent's trace-id as is.
  return `00-${spanContext.traceId.toLowerCase()}-${spanContext.spanId.toLowerCase()}-${flags}`;
}

/**
 * The remote span context a `traceparent` names, with the `tracestate` sent beside it, or `undefined` when the value
 * is not one (§3.2.2).
 */
export function parseTraceparent(value: string | undefined, tracestate?: string): SpanContext | undefined {
  // §3.3: a vendor that failed to parse traceparent MUST NOT attempt to parse tracestate.
  if (value === undefined || !isTraceparent(value)) return undefined;
  // §3.2.2.5: the flags this library knows, the reserved bits zero (see KNOWN_TRACE_FLAGS); §3.2.4: a later version
  // is read by its first four fields alone.
  const remote: SpanContext = {
    traceId: value.slice(3, 35),
    spanId: value.slice(36, 52),
    traceFlags: Number.parseInt(value.slice(53, 55), 16) & KNOWN_TRACE_FLAGS || TraceFlags.NONE,
    isRemote: true,
  };
  // §3.3: tracestate travels with traceparent. Cut here (§3.3.1.5: whole members, long ones first, then from the
  // end), not by the API's createTraceState, which drops a list over 512 characters whole and reverses one over 32
  // members (@opentelemetry/api 1.9); invalid members are dropped, the rest kept in order.
  const kept = tracestate === undefined ? "" : truncateTracestate(tracestate);
  // §3.3.1.1: an empty list is accepted, not carried on: a propagator would send it ("SHOULD avoid sending them").
  if (kept !== "") remote.traceState = createTraceState(kept);
  return remote;
}

/**
 * `parent` with the remote span `traceparent` names (carrying `tracestate`) as its span, or `parent` itself when
 * there is none.
 */
export function contextWithTraceparent(parent: Context, value: string | undefined, tracestate?: string): Context {
  const remote = parseTraceparent(value, tracestate);
  return remote === undefined ? parent : trace.setSpanContext(parent, remote);
}

/** Epoch ms as seconds, the unit of OpenTelemetry duration histograms (semantic conventions, "Metrics"). */
export const seconds = (ms: number): number => ms / 1000;
