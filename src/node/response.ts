import type { ServerResponse } from "node:http";
import { checkDeclaredLength } from "../http/declared-length";
import { checkFinalStatus } from "../http/final-status";
import type { HttpResponse } from "../http/message";

type OutgoingHeaders = Record<string, string | number | readonly string[]>;

// RFC 9110 §6.4.1: 204, 205 and 304 responses never carry content.
const hasNoContent = (status: number) => status === 204 || status === 205 || status === 304;

// The framing fields a handler set, whatever the case of their names (RFC 9110 §5.1: case-insensitive).
const CONTENT_LENGTH = 1;
const TRANSFER_ENCODING = 2;
const isContentLength = (name: string) => name.length === 14 && name.toLowerCase() === "content-length";
const isTransferEncoding = (name: string) => name.length === 17 && name.toLowerCase() === "transfer-encoding";

// The value of the handler's Content-Length, whatever the case of its name.
function declaredLength(headers: OutgoingHeaders): string | number | readonly string[] {
  for (const name in headers) if (isContentLength(name)) return headers[name] as string | number | readonly string[];
  return "";
}

function framingFields(headers: OutgoingHeaders): number {
  let found = 0;
  for (const name in headers) {
    if (isContentLength(name)) found |= CONTENT_LENGTH;
    else if (isTransferEncoding(name)) found |= TRANSFER_ENCODING;
  }
  return found;
}

/**
 * A copy of `headers` without Transfer-Encoding: the adapter frames the message itself, with the whole body and its
 * length, and RFC 9112 §6.2 forbids Content-Length beside Transfer-Encoding. `length` is the Content-Length to send
 * in place of the handler's (a number: one field only, two would make the message invalid, RFC 9112 §6.3), `null`
 * for none, `undefined` to keep the handler's. Copied key by key on purpose: measured on Node 20, an object built by
 * spread (`{ ...headers, "content-length": n }`) makes node:http's `writeHead` ~25 % slower per request than a plain
 * object filled in a loop.
 */
function reframed(headers: OutgoingHeaders, length: number | null | undefined): OutgoingHeaders {
  const copy: OutgoingHeaders = {};
  const replaceLength = length !== undefined;
  for (const name in headers) {
    if (isTransferEncoding(name) || (replaceLength && isContentLength(name))) continue;
    copy[name] = headers[name] as string | number | readonly string[];
  }
  if (typeof length === "number") copy["content-length"] = length;
  return copy;
}

// The header fields sent with a response that has no content: a 204, 205 or 304, one without a body, one to HEAD.
function noContentHeaders(status: number, headers: OutgoingHeaders, fields: number, head: boolean): OutgoingHeaders {
  // RFC 9110 §15.3.6: a 205 has no content; Content-Length: 0 says so (node:http would otherwise send a chunked empty
  // body, and a handler's own Content-Length would announce bytes that never come).
  if (status === 205) return reframed(headers, 0);
  // RFC 9110 §8.6: a server MUST NOT send Content-Length in a 204 (nor Transfer-Encoding, RFC 9112 §6.1).
  if (status === 204) return fields === 0 ? headers : reframed(headers, null);
  // A body of null frames as an empty one: without a length node:http sends a chunked "0" (to HTTP/1.0, a close). Not
  // in a 304 or a response to HEAD: their Content-Length is the selected representation's (RFC 9110 §8.6), kept.
  if ((fields & CONTENT_LENGTH) === 0 && status !== 304 && !head) return reframed(headers, 0);
  return (fields & TRANSFER_ENCODING) === 0 ? headers : reframed(headers, undefined);
}

/**
 * Writes an {@link HttpResponse} to a node:http response, adding Content-Length when the body is known (0 for a body
 * of null, but in a 304 or a response to HEAD); a handler's Transfer-Encoding is dropped (the whole body goes out with
 * its length). The response's header object is not modified. node:http itself drops the body of a HEAD response.
 * @throws RangeError when the status is not a final one (200..599) or the handler's Content-Length is not the
 * body's length (a HEAD response excepted), or node:http's error when it refuses a header (the adapter turns each
 * into a 500).
 */
export function sendResponse(res: ServerResponse, response: HttpResponse): void {
  const { status, body } = response;
  checkFinalStatus(status);
  const given = response.headers as OutgoingHeaders;
  const fields = framingFields(given);
  const length = body == null ? 0 : typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
  const head = res.req?.method === "HEAD";
  // The client frames the body by the handler's Content-Length (RFC 9112 §6.3), except in a response without content
  // or to HEAD, where it is the representation's (RFC 9110 §8.6).
  if ((fields & CONTENT_LENGTH) !== 0 && !hasNoContent(status) && !head) {
    checkDeclaredLength(declaredLength(given), length);
  }
  if (body == null || hasNoContent(status)) {
    res.writeHead(status, noContentHeaders(status, given, fields, head) as Record<string, string | string[]>);
    res.end();
    return;
  }
  let headers = given;
  if ((fields & CONTENT_LENGTH) === 0) {
    headers = reframed(given, length);
  } else if ((fields & TRANSFER_ENCODING) !== 0) {
    headers = reframed(given, undefined);
  }
  res.writeHead(status, headers as Record<string, string | string[]>);
  res.end(body);
}

/** Sends a fallback response, or drops the connection when the headers are already out. */
export function sendOrDestroy(res: ServerResponse, response: HttpResponse): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // A writeHead that threw on a header value had already set the status message of its own status ("OK" for a
  // 200), which node:http keeps for the next writeHead: cleared, the fallback's status line has its own phrase.
  res.statusMessage = "";
  try {
    sendResponse(res, response);
  } catch {
    res.destroy();
  }
}

/**
 * Writes the status, the headers (with Content-Length) and the whole body, but leaves the response open, so the
 * connection stays up until the caller ends it; `false` when node:http refuses the status or a header.
 */
export function writeWithoutEnd(res: ServerResponse, response: HttpResponse): boolean {
  const body = response.body == null ? "" : response.body;
  const length = typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
  try {
    res.writeHead(
      response.status,
      reframed(response.headers as OutgoingHeaders, length) as Record<string, string | string[]>,
    );
  } catch {
    res.destroy();
    return false;
  }
  if (length > 0) res.write(body);
  return true;
}
