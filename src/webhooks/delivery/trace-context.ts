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

/**
 * §3.2.2.5: sampled (0x01) and, since Level 2, random-trace-id (0x02) are the flags defined; "The behavior of other
 * flags ... is reserved for future use. Vendors MUST set those to zero." The processing model (step 2.2) says the
 * same of a later version's flags: only the known ones are read, "unknown trace-flags [set] to 0".
 */
export const KNOWN_TRACE_FLAGS = 0x03;

/**
 * The `traceparent` this library sends for a stored one: version 00 with the same trace-id and parent-id and only the
 * known flags (§3.2.4: a later version's first fields "construct the new traceparent field according to the highest
 * version ... known to the implementation (... 00)"; downgrading is an allowed mutation, "Mutating the traceparent
 * field"), or `undefined` when `value` is no traceparent.
 * @param value a stored `traceparent`.
 * @example outgoingTraceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-ff-x")
 * // "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03"
 */
export function outgoingTraceparent(value: string): string | undefined {
  if (!isTraceparent(value)) return undefined;
  const flags = Number.parseInt(value.slice(53, 55), 16);
  // Version 00 (so exactly 55 lower-case characters) with no reserved flag is what would be built: sent as it is.
  if (value.startsWith("00-") && (flags & ~KNOWN_TRACE_FLAGS) === 0) return value;
  return `00-${value.slice(3, 52)}-${(flags & KNOWN_TRACE_FLAGS).toString(16).padStart(2, "0")}`;
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
 * §3.3.1.5: the length a vendor SHOULD propagate at least (commas and optional white space counted); past it a vendor
 * may truncate. This library measures its lists without white space, as it stores and sends them, and keeps nothing
 * longer, so what it stores is always sent whole.
 */
export const MAX_TRACESTATE_LENGTH = 512;
/** §3.3.1.5: "Entries larger than 128 characters long SHOULD be removed first" when a list is truncated. */
const LONG_MEMBER_LENGTH = 128;

/**
 * The members of a `tracestate` list in order, the one walk {@link tracestateOf} (which refuses) and
 * {@link truncateTracestate} (which drops) share: each non-empty member without its OWS (§3.3.1.1), or `undefined`
 * for one that is not `key=value` (§3.3.1.3) or repeats an earlier member's key (§3.3.1.4).
 */
function* tracestateMembers(value: string): Generator<string | undefined, void, undefined> {
  const keys = new Set<string>();
  for (const part of value.split(",")) {
    const member = part.replace(OWS, "");
    // §3.3.1.1: empty members are allowed, and carry nothing.
    if (member === "") continue;
    if (!TRACESTATE_MEMBER.test(member)) {
      yield undefined;
      continue;
    }
    const key = member.slice(0, member.indexOf("="));
    if (keys.has(key)) {
      yield undefined;
      continue;
    }
    keys.add(key);
    yield member;
  }
}

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
  for (const member of tracestateMembers(value)) {
    // A malformed member is refused, and so is a key twice (§3.3.1.4: "Only one entry per key is allowed", and adding
    // one "MUST NOT result in the same key being present multiple times"), not stored for the library to send.
    if (member === undefined) return undefined;
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

/**
 * A `tracestate` received from elsewhere (a request header, an SDK's span) cut to what this library propagates, never
 * refused: members that are not `key=value` and the later of a repeated key are dropped (processing model, step 3:
 * "Invalid tracestate entries MAY also be discarded"; §3.3.1.4 and "Mutating the tracestate field": a vendor "MAY
 * also discard duplicate keys", and the left-most is the latest position), members past the 32nd are dropped
 * (Level 2 §3.3.1.1: "the right-most list-member should be removed"), and a list over 512 characters loses whole
 * members (§3.3.1.5: "MUST truncate whole entries. Entries larger than 128 characters long SHOULD be removed first.
 * Then entries SHOULD be removed starting from the end"), never a cut one. Order is kept. `""` when nothing is left.
 * @param value the header value (several lines joined by ",").
 * @example truncateTracestate(`congo=1,big=${"b".repeat(600)},rojo=2`) // "congo=1,rojo=2"
 */
export function truncateTracestate(value: string): string {
  const members: string[] = [];
  for (const member of tracestateMembers(value)) {
    if (member === undefined) continue;
    members.push(member);
    if (members.length === MAX_TRACESTATE_MEMBERS) break;
  }
  let length = members.join(",").length;
  while (length > MAX_TRACESTATE_LENGTH) {
    const long = members.findLastIndex((member) => member.length > LONG_MEMBER_LENGTH);
    const drop = long === -1 ? members.length - 1 : long;
    // The member and the comma beside it (a list of one has none).
    length -= (members[drop]?.length ?? 0) + (members.length > 1 ? 1 : 0);
    members.splice(drop, 1);
  }
  return members.join(",");
}
