import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { HttpProblem, type HttpProblemCode } from "../http/problem";
import { isHostValue } from "../http/request-target";
import { endWithProblem } from "./client-error";

// The refusals below answer before the body is read: the connection closes once the client stops sending.
const CLOSE = { connection: "close" } as const;

/**
 * The problem `createServer` answers a request with before any handler runs, for what RFC 9112 says of the message
 * itself (node:http lets it through, or answers with a bare status): `undefined` for a request to serve.
 * - 505 `http_version_not_supported`: a major version other than 1. node's parser refuses every other version but
 *   these two (a parser error, 400 `malformed_request`): `HTTP/2.0` (never sent as text: HTTP/2 has binary framing),
 *   and `HTTP/0.9`, which a request line without a version also gets. RFC 9110 §15.6.6.
 * - 400 `invalid_host`: an HTTP/1.1 request without Host, or any request with more than one Host field line or an
 *   invalid value (RFC 9112 §3.2: a server MUST answer 400). node:http joins repeated lines with ", "
 *   (`joinDuplicateHeaders`), which no valid Host contains, so the value check finds them too.
 */
export function messageProblem(req: IncomingMessage): HttpProblem<HttpProblemCode> | undefined {
  if (req.httpVersionMajor !== 1) {
    return new HttpProblem({
      status: 505,
      code: "http_version_not_supported",
      // RFC 9110 §15.6.6: the representation SHOULD say why, and which versions the server supports.
      detail: `The server speaks HTTP/1.1 and HTTP/1.0, not HTTP/${req.httpVersion}.`,
      headers: CLOSE,
    });
  }
  const host = req.headers.host;
  if (host === undefined) {
    // HTTP/1.0 predates Host: such a request is served without one.
    if (req.httpVersionMinor === 0) return undefined;
    return invalidHost("An HTTP/1.1 request must carry a Host header field (RFC 9112 §3.2).");
  }
  if (isHostValue(host)) return undefined;
  return invalidHost('The Host header field must be sent once, as host [ ":" port ] (RFC 9112 §3.2, RFC 9110 §7.2).');
}

function invalidHost(detail: string): HttpProblem<HttpProblemCode> {
  return new HttpProblem({ status: 400, code: "invalid_host", detail, headers: CLOSE });
}

/**
 * The 417 for an `Expect` other than `100-continue` (node:http's `checkExpectation`): RFC 9110 §10.1.1 lets a server
 * refuse an expectation it cannot meet with 417 (§15.5.18), and this server meets none but 100-continue.
 */
export function expectationFailed(): HttpProblem<HttpProblemCode> {
  return new HttpProblem({
    status: 417,
    code: "expectation_failed",
    detail: "The server meets no expectation but 100-continue.",
    headers: CLOSE,
  });
}

/**
 * Answers a CONNECT request (node:http's `'connect'` event, which hands over the socket) with a 501 problem, then
 * closes: this server is no proxy and tunnels for no resource (RFC 9110 §9.3.6; §15.6.2: 501 is the answer to a method
 * the server does not support for any resource; a 405 would say it does for another). Without a `'connect'`
 * listener node:http destroys the socket and the client gets no answer at all. What the client sends meanwhile (a
 * TLS ClientHello sent early) is read and discarded, within the lingering bounds, so it reads the 501 rather than a
 * reset (RFC 9112 §9.6).
 */
export function answerConnect(socket: Duplex, bounds: { lingerMs: number; lingerBytes: number }): void {
  // node:http took its own listeners off the socket: an error with no listener would throw in the process.
  socket.on("error", () => socket.destroy());
  let drained = 0;
  socket.on("data", (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > bounds.lingerBytes) socket.destroy();
  });
  const timer = setTimeout(() => socket.destroy(), bounds.lingerMs);
  timer.unref();
  socket.once("close", () => clearTimeout(timer));
  endWithProblem(
    socket,
    new HttpProblem({
      status: 501,
      code: "method_not_implemented",
      detail: "The server does not implement CONNECT: it is not a proxy.",
    }),
  );
}
