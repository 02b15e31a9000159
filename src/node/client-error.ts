import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { HttpProblemCode } from "../http/problem";
import { HttpProblem, PROBLEM_CONTENT_TYPE, reasonPhrase } from "../http/problem";

/** What node's parser puts on the error it hands to `clientError`: the chunk it was parsing, and how far it got. */
type ParserError = Error & { code?: string; rawPacket?: unknown; bytesParsed?: unknown };

const SP = 0x20;
const LF = 0x0a;
// RFC 9110 §5.6.2 token, then SP and a request-target without SP: a request line that never ended (RFC 9112 §3).
const REQUEST_LINE_START = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ [^ ]*$/;
// Only characters a request-target has (RFC 9112 §3.2 over RFC 3986 §3.3, §3.4: pchar, "/", "?", pct-encoded).
const TARGET_CHARS = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]+$/;

/** Where the parser stopped in the chunk it was parsing, and where that byte's line starts; `undefined` without one. */
function stopPoint(error: ParserError): { packet: Uint8Array; at: number; line: number } | undefined {
  const packet = error.rawPacket;
  const at = error.bytesParsed;
  if (!(packet instanceof Uint8Array) || typeof at !== "number" || at < 0 || at > packet.length) return undefined;
  return { packet, at, line: at === 0 ? 0 : packet.lastIndexOf(LF, at - 1) + 1 };
}

/**
 * Whether node's header overflow (its limit counts the request-target with the field lines) was the request-target's:
 * RFC 9112 §3, a server MUST answer 414 (RFC 9110 §15.5.15) to a target longer than any it parses. The parser stops
 * at the end of the part that overflowed, or at the end of the chunk when that part goes on in the next one. It was
 * the target when it ended at the SP before "HTTP/" (a field name ends at ":", a value at CR), or when its line began
 * in this chunk as a request line. A chunk that lies wholly inside the part that overflowed (a long target in TCP
 * segments) cannot be told from a long field value by the chunk alone: it counts as the target when each of its bytes
 * is one a request-target has (no whitespace, no line break, no `"`, …). RFC 9112 §3 makes the 414 a MUST, and a 431
 * (RFC 6585 §5) a MAY, so the doubt goes to the 414: a field value of target characters only (a token in base64url)
 * in three reads or more gets it too.
 */
function targetOverflowed(error: ParserError): boolean {
  const stop = stopPoint(error);
  if (stop === undefined) return false;
  const { packet, at, line } = stop;
  if (packet[at] === SP) {
    const version = Buffer.from(packet.buffer, packet.byteOffset + at + 1, Math.min(5, packet.length - at - 1));
    if ("HTTP/".startsWith(version.toString("latin1"))) return true;
  }
  if (REQUEST_LINE_START.test(Buffer.from(packet.buffer, packet.byteOffset + line, at - line).toString("latin1"))) {
    return true;
  }
  // The part goes on in the next chunk and began in an earlier one: the whole chunk is its middle.
  if (at !== packet.length || line !== 0) return false;
  return TARGET_CHARS.test(Buffer.from(packet.buffer, packet.byteOffset, packet.length).toString("latin1"));
}

// RFC 9110 §5.6.2 tchar: a method is a token (§9.1).
const TCHAR = /[!#$%&'*+.^_`|~0-9A-Za-z-]/;

/**
 * Whether node's parser refused a method that is a well-formed token (`FOO`, `get`, a 300-byte one): it knows a fixed
 * set of methods, so no handler behind it implements another for any resource, and RFC 9110 §9.1 asks for 501
 * (§15.6.2; RFC 9112 §3.1 for one longer than any implemented). A method that is no token (`G@T`) is a malformed
 * request line (400).
 */
function unknownMethod(error: ParserError): boolean {
  const stop = stopPoint(error);
  if (stop === undefined) return false;
  const { packet, at, line } = stop;
  let end = line;
  while (end < packet.length && TCHAR.test(String.fromCharCode(packet[end] as number))) end++;
  // The token holds the byte the parser stopped at (or ends there), and the request line goes on with SP.
  return end > line && end >= at && (end === packet.length || packet[end] === SP);
}

// Node's parser error codes (llhttp's HPE_*, plus node's own time-outs) mapped to the answer the
// client can act on; anything else is a plain malformed request (RFC 9112 §2.2).
function problemFor(error: ParserError): HttpProblem<HttpProblemCode> {
  const code = error.code;
  if (code === "HPE_HEADER_OVERFLOW" && targetOverflowed(error)) {
    return new HttpProblem({
      status: 414,
      code: "uri_too_long",
      detail: "The request target is longer than the server accepts.",
    });
  }
  if (code === "HPE_HEADER_OVERFLOW") {
    return new HttpProblem({
      status: 431,
      code: "headers_too_large",
      detail: "The request's header section is larger than the server accepts.",
    });
  }
  if (code === "HPE_INVALID_METHOD" && unknownMethod(error)) {
    return new HttpProblem({
      status: 501,
      code: "method_not_implemented",
      detail: "The server implements this request method for no resource.",
    });
  }
  if (code === "ERR_HTTP_REQUEST_TIMEOUT" || code === "HPE_TIMEOUT") {
    return new HttpProblem({ status: 408, code: "request_timeout", detail: "The request was not received in time." });
  }
  return new HttpProblem({
    status: 400,
    code: "malformed_request",
    detail: "The request is not valid HTTP/1.1 (request line, method token, header fields or framing).",
  });
}

/** The response node:http is writing on the connection (its `_httpMessage`), with its request. */
type InFlight = ServerResponse & { req?: IncomingMessage };
const inFlight = (socket: Duplex): InFlight | undefined =>
  (socket as Duplex & { _httpMessage?: InFlight | null })._httpMessage ?? undefined;

// Connections whose 400 waits for the responses before it: a later parser error on one changes nothing.
const waiting = new WeakSet<Duplex>();

/**
 * Calls `then` once every response in flight on the connection has been handed to it (node:http attaches the next
 * pipelined response to the socket as the previous one finishes), or destroys the socket when one of them breaks.
 */
function afterResponses(socket: Duplex, then: () => void): void {
  const current = inFlight(socket);
  if (current === undefined || current.writableFinished) {
    then();
    return;
  }
  if (current.destroyed) {
    socket.destroy();
    return;
  }
  const next = () => {
    current.off("finish", next);
    current.off("close", next);
    afterResponses(socket, then);
  };
  current.on("finish", next);
  current.on("close", next);
}

/**
 * Answers a request node's HTTP parser refused (`server.on("clientError")`) with a problem document
 * instead of node's bare `400 Bad Request`, then closes the connection: after a framing error the
 * rest of the stream cannot be trusted (RFC 9112 §2.2, §11.2). An error in a request after a whole one on the same
 * connection (pipelined) is answered after that one's response, in order (RFC 9112 §9.3.2).
 * @param error the parser's error; its `code` (e.g. `HPE_INVALID_METHOD`) picks 400, 408, 414, 431 or 501 (414 when the
 *   header overflow was the request-target's, as far as the chunk node was parsing shows; 501 for a method that is a
 *   token node's parser does not know).
 * @param socket the connection the request came on.
 * @example server.on("clientError", answerClientError)
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (waiting.has(socket)) return;
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const current = inFlight(socket);
  if (current !== undefined && !current.writableFinished) {
    // The error is in the body of the request being answered: a second response after the first one's bytes (a 413
    // sent before a chunk turned out malformed) would be garbage to the client. node:http's own check.
    if (current.req?.complete !== true) {
      if (current.headersSent) socket.destroy();
      else endWithProblem(socket, problemFor(error));
      return;
    }
    // The error is in a later request (pipelined, or bytes past a Content-Length): RFC 9112 §9.3.2, responses go out
    // in the order of the requests, so the 400 waits for the answers to the whole ones before it.
    waiting.add(socket);
    const problem = problemFor(error);
    afterResponses(socket, () => (socket.writable ? endWithProblem(socket, problem) : socket.destroy()));
    return;
  }
  endWithProblem(socket, problemFor(error));
}

/**
 * Writes `problem` as a whole HTTP/1.1 response on a socket node:http no longer answers on (after a parser error, or a
 * CONNECT it handed over), and ends the socket's writing side: `Connection: close`.
 */
export function endWithProblem(socket: Duplex, problem: HttpProblem): void {
  const body = JSON.stringify(problem.toJSON());
  socket.end(
    `HTTP/1.1 ${problem.status} ${reasonPhrase(problem.status)}\r\n` +
      `content-type: ${PROBLEM_CONTENT_TYPE}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `connection: close\r\n\r\n${body}`,
  );
}
