/**
 * W3C Trace Context `traceparent` values (https://www.w3.org/TR/trace-context/ §3.2), checked as plain strings so the
 * delivery module stays free of any tracing library.
 */

// §3.2.2: version "-" trace-id "-" parent-id "-" trace-flags, all lower-case hex. What a later version adds is
// visible ASCII: the value is sent as a header field (RFC 9110 §5.5), and one the HTTP client refuses (a control
// character) failed every attempt of the delivery without counting one, for ever.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[\x21-\x7e]*)?$/;
const ZERO_TRACE = "00000000000000000000000000000000";
const ZERO_SPAN = "0000000000000000";

/**
 * Whether `value` is a `traceparent` this library stores and forwards.
 * Version 00 is exactly 55 characters; a later version may carry more fields after a "-" (§3.2.4, "Versioning of
 * traceparent"); version ff, an all-zero trace-id or parent-id are invalid (§3.2.2.1–3).
 * @param value the header value.
 * @example isTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01") // true
 */
export function isTraceparent(value: string): boolean {
  const match = TRACEPARENT.exec(value);
  if (match === null) return false;
  const [, version, traceId, spanId, , rest] = match;
  if (version === "ff" || traceId === ZERO_TRACE || spanId === ZERO_SPAN) return false;
  return version !== "00" || rest === undefined;
}

/** Refuses a `traceparent` publish option that is not one (misuse: the caller passes what its tracer formatted). */
export function checkTraceparent(value: string | undefined, where: string): void {
  if (value === undefined) return;
  if (typeof value !== "string" || !isTraceparent(value)) {
    throw new TypeError(`${where}: options.traceparent must be a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>)`);
  }
}
