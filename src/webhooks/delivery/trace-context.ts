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

// W3C Trace Context §3.3.1.3.1 (key) and §3.3.1.3.2 (value):
//   simple-key = lcalpha 0*255( lcalpha / DIGIT / "_" / "-"/ "*" / "/" )
//   multi-tenant-key = tenant-id "@" system-id
//   tenant-id = ( lcalpha / DIGIT ) 0*240( lcalpha / DIGIT / "_" / "-"/ "*" / "/" )
//   system-id = lcalpha 0*13( lcalpha / DIGIT / "_" / "-"/ "*" / "/" )
//   value = 0*255(chr) nblk-chr; nblk-chr = %x21-2B / %x2D-3C / %x3E-7E; chr = %x20 / nblk-chr
const TRACESTATE_MEMBER =
  /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;
// §3.3.1.1: OWS = *( SP / HTAB ) around each member.
const OWS = /^[ \t]+|[ \t]+$/g;

/** §3.3.1.1: at most 32 list members. */
export const MAX_TRACESTATE_MEMBERS = 32;
/**
 * §3.3.1.5: the length a vendor must propagate at least (commas counted, optional white space not); past it a vendor
 * may truncate. This library keeps nothing longer, so what it stores is always sent whole.
 */
export const MAX_TRACESTATE_LENGTH = 512;

/**
 * The W3C `tracestate` list (https://www.w3.org/TR/trace-context/ §3.3) as this library stores and sends it: its
 * members joined by "," without optional white space or empty members, `""` for a list with none (§3.3.1.1: empty
 * members are allowed), or `undefined` when it is not a list this library forwards: a member that is not
 * `key=value` (§3.3.1.3), more than 32 members, a key twice, or over 512 characters once joined (§3.3.1.5).
 * @param value the header value.
 * @example tracestateOf("congo=t61rcWkgMzE , rojo=00f067aa0ba902b7") // "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"
 */
export function tracestateOf(value: string): string | undefined {
  if (typeof value !== "string") return undefined;
  const members: string[] = [];
  const keys = new Set<string>();
  for (const part of value.split(",")) {
    const member = part.replace(OWS, "");
    if (member === "") continue;
    if (!TRACESTATE_MEMBER.test(member)) return undefined;
    const key = member.slice(0, member.indexOf("="));
    // §3.3.1.3.1: a key appears once in the list (the test suite's "duplicated keys" case discards the header).
    if (keys.has(key)) return undefined;
    keys.add(key);
    members.push(member);
    if (members.length > MAX_TRACESTATE_MEMBERS) return undefined;
  }
  const joined = members.join(",");
  return joined.length > MAX_TRACESTATE_LENGTH ? undefined : joined;
}

/**
 * Refuses a `tracestate` publish option that is not a list {@link tracestateOf} takes, or one without a
 * `traceparent` (§3.3: it travels beside `traceparent`, and means nothing alone); returns what is stored, `undefined`
 * for none (an empty list is not sent: §3.3.1.1 "SHOULD avoid sending" an empty `tracestate`).
 */
export function checkTracestate(
  tracestate: string | undefined,
  traceparent: string | undefined,
  where: string,
): string | undefined {
  if (tracestate === undefined) return undefined;
  const kept = tracestateOf(tracestate);
  if (kept === undefined) {
    throw new TypeError(
      `${where}: options.tracestate must be a W3C tracestate (key=value members joined by ",", at most ${MAX_TRACESTATE_MEMBERS}, each key once, ${MAX_TRACESTATE_LENGTH} characters at most)`,
    );
  }
  if (traceparent === undefined) throw new TypeError(`${where}: options.tracestate needs options.traceparent`);
  return kept === "" ? undefined : kept;
}
