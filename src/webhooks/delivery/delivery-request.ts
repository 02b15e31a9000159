import { sign } from "../signing/sign";
import type { DeliveryRecord } from "./delivery-queue";
import { activeSecrets, type WebhookEndpoint } from "./endpoint";
import { isEndpointHeaderName } from "./endpoint-headers";
import { outgoingTraceparent, tracestateOf } from "./trace-context";

/** An HTTP request ready for the dispatcher. */
export interface DeliveryRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

// RFC 9110 §5.5: field-value = *field-content, field-vchar = VCHAR / obs-text, with SP and HTAB between (the
// characters undici sends; any other, CR, LF or NUL above all, makes it refuse the whole request).
const SENDABLE_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * The endpoint's stored fields as they may be sent: names in lower case, and none the delivery, its framing or its
 * signature owns, in any case (RFC 9110 §5.1: names ignore case). The API and the admin store them so already; a row
 * written by hand may not be, and must not add a second `Webhook-Signature` beside the delivery's, nor a value the
 * HTTP client refuses: that failed every attempt without counting one, so the delivery was claimed again for ever.
 */
function endpointFields(stored: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const fields: Record<string, string> = {};
  if (stored === undefined) return fields;
  for (const [name, value] of Object.entries(stored)) {
    const lower = name.toLowerCase();
    // "__proto__" is a token, but assigning it would set the prototype, not a field.
    if (typeof value !== "string" || lower === "__proto__" || !isEndpointHeaderName(name)) continue;
    if (SENDABLE_VALUE.test(value)) fields[lower] = value;
  }
  return fields;
}

/** What {@link buildDeliveryRequest} adds beside the signed fields. */
export interface DeliveryRequestOptions {
  /** The `User-Agent` field. @default "rest-webhooks" */
  userAgent?: string;
  /** The delivery's W3C `traceparent`, sent when it is one (the worker's `propagateTraceContext`). */
  traceparent?: string;
  /** The delivery's W3C `tracestate`, sent only beside a `traceparent` that is sent. */
  tracestate?: string;
}

/**
 * Builds one attempt's request: the same `webhook-id` (the event id) on every attempt, a fresh timestamp and fresh
 * signatures by every active secret (Standard Webhooks, "Signature scheme"; several signatures during a rotation).
 * With `traceparent` (the delivery's, when the worker propagates trace context) the request carries that header, and
 * `tracestate` beside it when given (never alone).
 * The endpoint's `headers` are added, never in place of these: a stored field under a name the delivery owns (any
 * case; see `isEndpointHeaderName`) is not sent.
 * @example buildDeliveryRequest(delivery, endpoint, Date.now(), { userAgent: "acme-webhooks/1.0" })
 */
export function buildDeliveryRequest(
  delivery: Pick<DeliveryRecord, "eventId" | "payload">,
  endpoint: Pick<WebhookEndpoint, "url" | "secrets"> & Partial<Pick<WebhookEndpoint, "headers">>,
  now: number,
  options: DeliveryRequestOptions = {},
): DeliveryRequest {
  const { userAgent = "rest-webhooks", traceparent, tracestate } = options;
  const signed = sign({
    id: delivery.eventId,
    timestamp: Math.floor(now / 1000),
    body: delivery.payload,
    secrets: activeSecrets(endpoint, now),
  });
  const headers: Record<string, string> = {
    // The endpoint's own first: the fields below are the delivery's, and win over one stored by hand.
    ...endpointFields(endpoint.headers),
    "content-type": "application/json",
    "user-agent": userAgent,
    "webhook-id": signed["webhook-id"],
    "webhook-timestamp": signed["webhook-timestamp"],
    "webhook-signature": signed["webhook-signature"],
  };
  // W3C Trace Context §3.2: the receiver continues the publisher's trace. Only when asked: it tells the receiver
  // about our tracing (the worker's `propagateTraceContext`). One stored by hand or by an earlier version that is
  // not a traceparent is not sent: the HTTP client may refuse it, and the receiver could not use it. A later version
  // goes out as version 00, the reserved flags zero (§3.2.4, §3.2.2.5).
  const sent = traceparent === undefined ? undefined : outgoingTraceparent(traceparent);
  if (sent !== undefined) {
    headers.traceparent = sent;
    // §3.3: tracestate goes with the traceparent it belongs to, never alone. One stored by hand that is not a list
    // (a CR or LF, a 33rd member) is left out, as is an empty one (§3.3.1.1: SHOULD avoid sending it).
    const state = tracestate === undefined ? undefined : tracestateOf(tracestate);
    if (state) headers.tracestate = state;
  }
  return { url: endpoint.url, headers, body: delivery.payload };
}

/**
 * Where a request goes: the scheme, host and port of its URL, the parts the OpenTelemetry HTTP client conventions
 * require on a client span (`url.scheme`, `server.address`, `server.port`). Never the path or query: a webhook URL's
 * path often holds a secret (Slack-style `…/services/T0/B0/<token>`).
 */
export interface RequestTarget {
  /** The URI scheme, without its colon: `https` or `http`. */
  scheme: string;
  /** The host as written in the URL (not resolved); an IPv6 address without its brackets. */
  host: string;
  /** The URL's port, else the scheme's default (443 for https, 80 for http). */
  port: number;
}

// RFC 9110 §4.2.1, §4.2.2: a URI that names no port means the scheme's default.
const DEFAULT_PORTS: Readonly<Record<string, number>> = { "https:": 443, "http:": 80 };

/** The {@link RequestTarget} of `url`, or `undefined` when it is no absolute http(s) URL (a row stored by hand). */
export function requestTarget(url: string): RequestTarget | undefined {
  if (!URL.canParse(url)) return undefined;
  const parsed = new URL(url);
  const defaultPort = DEFAULT_PORTS[parsed.protocol];
  if (defaultPort === undefined) return undefined;
  const port = parsed.port === "" ? defaultPort : Number(parsed.port);
  // RFC 3986 §3.2.2: the brackets delimit an IP literal in a URI; they are not part of the address.
  const host = parsed.hostname.startsWith("[") ? parsed.hostname.slice(1, -1) : parsed.hostname;
  return { scheme: parsed.protocol.slice(0, -1), host, port };
}

/**
 * Whether a request built for `endpoint` at `builtAt` is the one building it at `now` would give: the same signed
 * second (Standard Webhooks signs `webhook-timestamp` in seconds) and no secret of the endpoint expiring in between.
 * So a worker may sign a delivery while it waits for its turn and send that signature.
 */
export function signedAsOf(endpoint: Pick<WebhookEndpoint, "secrets">, builtAt: number, now: number): boolean {
  if (Math.floor(builtAt / 1000) !== Math.floor(now / 1000) || now < builtAt) return false;
  for (const entry of endpoint.secrets) {
    if (entry.expiresAt !== null && entry.expiresAt > builtAt && entry.expiresAt <= now) return false;
  }
  return true;
}
