import { bodyBytes, type HttpResponse, type ResponseHeaders } from "../http/message";
import type { StoredResponse } from "./store";

/** The header field Stripe sends on a replayed response. */
export const REPLAYED_HEADER = "idempotent-replayed";

/**
 * Header fields kept with a stored response by default: those describing the representation or
 * the created resource, its cacheability (a replay must not become cacheable where the first
 * answer was not), and those its status calls for: a stored 4xx keeps what tells the client how to
 * fix the request. `set-cookie` and per-request fields (`date`, tracing ids) are left out.
 */
export const DEFAULT_REPLAY_HEADERS: readonly string[] = [
  "content-type",
  "content-encoding",
  "content-language",
  "content-location",
  "content-disposition",
  "content-range",
  "location",
  "etag",
  "last-modified",
  "link",
  "cache-control",
  "vary",
  // RFC 9110 §15.5.6: a 405 MUST list the allowed methods.
  "allow",
  // RFC 9110 §11.6.1, §11.7.1: a 401 MUST carry WWW-Authenticate, a 407 Proxy-Authenticate.
  "www-authenticate",
  "proxy-authenticate",
  // What a 415 accepts instead (RFC 9110 §15.5.16, §12.5.3; RFC 5789 §2.2; W3C LDP §7.1): the router's 415s send them.
  "accept-post",
  "accept-patch",
  "accept-encoding",
];

// A copy of a repeated field's values. Redis and PostgreSQL read back only strings: a list item of another type (a
// number from a JavaScript handler) was written, then failed every begin on the key (idempotency_record_invalid, a
// 500) until the record expired, where the memory store replayed it. Thrown here, it is reported, and nothing stored.
function lines(name: string, value: readonly string[]): string[] {
  const copy = [...value];
  for (const item of copy) {
    if (typeof item !== "string") {
      throw new TypeError(`idempotency: the response's ${name} header field holds a ${typeof item}, not a string.`);
    }
  }
  return copy;
}

const asList = (value: string | readonly string[]): readonly string[] => (typeof value === "string" ? [value] : value);

/**
 * Captures what a replay needs from `response`: its status, the header fields it has among
 * `headerNames`, and a copy of its body bytes.
 *
 * @param response the handler's response.
 * @param headerNames lower-case names of the header fields to keep ({@link DEFAULT_REPLAY_HEADERS}).
 * @throws TypeError when a kept header field's value is neither a string nor a list of strings.
 * @example toStoredResponse(json(201, { id: 1 }), new Set(DEFAULT_REPLAY_HEADERS))
 * // { status: 201, headers: { "content-type": "application/json" }, body: Uint8Array [ … ] }
 * @see https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/ ("Idempotency Enforcement": later requests get the first one's result)
 */
export function toStoredResponse(response: HttpResponse, headerNames: ReadonlySet<string>): StoredResponse {
  const headers: ResponseHeaders = {};
  for (const name in response.headers) {
    const lower = name.toLowerCase();
    const value = response.headers[name];
    if (value === undefined || !headerNames.has(lower)) continue;
    const copy = typeof value === "string" ? value : lines(name, value);
    const kept = headers[lower];
    // node:http and the Fetch adapter send a name given under two spellings (`Vary`, `vary`) as the field lines of
    // both, in order: so does the replay.
    headers[lower] = kept === undefined ? copy : [...asList(kept), ...asList(copy)];
  }
  const body = response.body;
  // A copy: the stored bytes must not change if the handler reuses its buffer. Not `slice()`: on a Node Buffer it
  // is a view of the same memory.
  return {
    status: response.status,
    headers,
    body: typeof body === "string" ? bodyBytes(body) : new Uint8Array(bodyBytes(body)),
  };
}

/**
 * The replayed response: the stored one byte for byte, plus `Idempotent-Replayed: true` (Stripe's
 * header), with no content when the stored body is empty.
 *
 * @param stored what {@link toStoredResponse} captured from the first response.
 * @example replayResponse({ status: 201, headers: {}, body: new Uint8Array() })
 * // { status: 201, headers: { "idempotent-replayed": "true" }, body: null }
 * @see https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/ ("Idempotency Enforcement")
 */
export function replayResponse(stored: StoredResponse): HttpResponse {
  return {
    status: stored.status,
    headers: { ...stored.headers, [REPLAYED_HEADER]: "true" },
    body: stored.body.byteLength === 0 ? null : stored.body,
  };
}
