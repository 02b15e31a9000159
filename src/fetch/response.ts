import { checkDeclaredLength } from "../http/declared-length";
import { checkFinalStatus } from "../http/final-status";
import type { HttpResponse } from "../http/message";

// RFC 9110 §6.4.1 / Fetch "null body status": these responses never carry content (1xx never reach here).
const NULL_BODY_STATUS = new Set([204, 205, 304]);
const encoder = new TextEncoder();

/**
 * A header value as text: a number from plain JavaScript (outside `ResponseHeaders`) goes out as its digits, as
 * node:http sends it; anything else (`undefined`, an object) is refused, as node:http refuses it.
 */
function fieldText(name: string, value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  throw new TypeError(`Invalid value "${String(value)}" for header "${name}"`);
}

/**
 * Turns an {@link HttpResponse} into a Fetch `Response`, adding Content-Length when the body is known; a handler's
 * Transfer-Encoding is dropped (the runtime frames the message).
 * @param method the request method: a HEAD response carries the headers, Content-Length included, but no
 * body (RFC 9110 §9.3.2).
 * @throws RangeError when the status is not a final one (200..599) or the handler's Content-Length is not the
 * body's length (a HEAD response excepted), or the runtime's error when it refuses a header value (the adapter turns
 * each into a 500).
 */
export function sendResponse(response: HttpResponse, method = "GET"): Response {
  checkFinalStatus(response.status);
  const headers = new Headers();
  // Appended, never set: a name the object holds under two spellings (`Vary`, `vary`) keeps both values, as node:http
  // sends each key as field lines of its own (RFC 9110 §5.3), and Set-Cookie stays one field per value.
  for (const name in response.headers) {
    const value: unknown = response.headers[name];
    if (typeof value === "string") headers.append(name, value);
    else if (Array.isArray(value)) for (const item of value) headers.append(name, fieldText(name, item));
    else headers.append(name, fieldText(name, value));
  }
  // RFC 9112 §6.2: never beside the Content-Length set below; the runtime chooses the framing.
  headers.delete("transfer-encoding");
  if (NULL_BODY_STATUS.has(response.status)) {
    // RFC 9110 §8.6: no Content-Length in a 204; §15.3.6: a 205 has no content, so none can be announced.
    if (response.status !== 304) headers.delete("content-length");
    return new Response(null, { status: response.status, headers });
  }
  // Encoded only past that check: a response that carries no content never pays for its bytes.
  const body = typeof response.body === "string" ? encoder.encode(response.body) : response.body;
  const declared = headers.get("content-length");
  // The client frames the body by the handler's Content-Length (RFC 9112 §6.3), except in a response to HEAD, where
  // it is the representation's (RFC 9110 §8.6).
  if (declared !== null && method !== "HEAD") checkDeclaredLength(declared, body?.byteLength ?? 0);
  if (body == null) return new Response(null, { status: response.status, headers });
  if (declared === null) headers.set("content-length", String(body.byteLength));
  return new Response(method === "HEAD" ? null : (body as BodyInit), { status: response.status, headers });
}
