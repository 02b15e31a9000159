import { z } from "zod";

/**
 * Header fields an endpoint's owner adds to every request to it (`headers`), for a receiver behind a gateway that
 * wants a key of its own, or routing hints; as Svix's endpoint headers. They are not signed (the signature covers
 * the id, the timestamp and the body): never a substitute for verifying it.
 */

/** The most header fields an endpoint may add. */
export const MAX_ENDPOINT_HEADERS = 20;
/** The longest header name, in characters. */
const MAX_ENDPOINT_HEADER_NAME = 64;
/** The longest header value, in characters. */
export const MAX_ENDPOINT_HEADER_VALUE = 1_024;

// RFC 9110 §5.1: a field name is a token.
const TOKEN = new RegExp(`^[!#$%&'*+\\-.^_\`|~0-9A-Za-z]{1,${MAX_ENDPOINT_HEADER_NAME}}$`);
// RFC 9110 §5.5: visible ASCII, with spaces and tabs inside only; never CR, LF or NUL (a header injection).
const VALUE = /^[\x21-\x7e](?:[\x20-\x7e\t]*[\x21-\x7e])?$/;

// Fields the request's framing, the signature and the dispatcher own (RFC 9110 §6.6.1, §7.6.1, §7.8, §8.6, §10.1.1;
// Standard Webhooks; W3C Trace Context): an endpoint setting one would break or forge the delivery. Every content-*
// field describes the body the delivery sends (RFC 9110 §8; Content-Range, Content-Digest of RFC 9530 too).
const RESERVED = new Set([
  "host",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "te",
  "trailer",
  "upgrade",
  "expect",
  "user-agent",
  "traceparent",
  "tracestate",
]);
const RESERVED_PREFIXES = ["content-", "webhook-", "proxy-"];

/** Whether `name` (any case) is a field an endpoint may set. */
export function isEndpointHeaderName(name: string): boolean {
  if (!TOKEN.test(name)) return false;
  const lower = name.toLowerCase();
  return !RESERVED.has(lower) && !RESERVED_PREFIXES.some((prefix) => lower.startsWith(prefix));
}

/** Whether `value` is a field value an endpoint may set. */
export function isEndpointHeaderValue(value: string): boolean {
  return value.length <= MAX_ENDPOINT_HEADER_VALUE && VALUE.test(value);
}

const NAME_RULE = `A field name (RFC 9110 token, up to ${MAX_ENDPOINT_HEADER_NAME} characters) other than host, content-*, transfer-encoding, connection, keep-alive, te, trailer, upgrade, expect, user-agent, traceparent, tracestate, webhook-* and proxy-*.`;
const VALUE_RULE = `Visible ASCII, spaces and tabs inside only, 1 to ${MAX_ENDPOINT_HEADER_VALUE} characters.`;

/**
 * The `headers` member of a body: names checked in any case and kept in lower case (field names are
 * case-insensitive, RFC 9110 §5.1), two names that differ only in case refused. `nullable` values: a merge patch's
 * removals.
 */
export function endpointHeadersSchema<V extends z.ZodType>(value: V) {
  return z
    .record(
      // OpenAPI states the token rule; the reserved names are in the description (a pattern cannot ignore case).
      z
        .string()
        .refine(isEndpointHeaderName, NAME_RULE)
        .meta({ pattern: TOKEN.source, minLength: 1, maxLength: MAX_ENDPOINT_HEADER_NAME, description: NAME_RULE }),
      value,
    )
    .superRefine((record, ctx) => {
      const names = Object.keys(record);
      if (names.length > MAX_ENDPOINT_HEADERS) {
        ctx.addIssue({ code: "custom", message: `headers has at most ${MAX_ENDPOINT_HEADERS} fields.` });
      }
      const seen = new Set<string>();
      for (const name of names) {
        if (seen.has(name.toLowerCase())) {
          ctx.addIssue({ code: "custom", path: [name], message: "The same field name twice (names ignore case)." });
        }
        seen.add(name.toLowerCase());
      }
    })
    .transform((record) => Object.fromEntries(Object.entries(record).map(([name, v]) => [name.toLowerCase(), v])))
    .meta({ maxProperties: MAX_ENDPOINT_HEADERS });
}

/** A header value in a body. */
export const endpointHeaderValue = z
  .string()
  .refine(isEndpointHeaderValue, VALUE_RULE)
  .meta({ pattern: VALUE.source, minLength: 1, maxLength: MAX_ENDPOINT_HEADER_VALUE, description: VALUE_RULE });
