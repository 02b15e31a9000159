import type { Duplex } from "node:stream";
import type { HttpProblemCode } from "../http/problem";
import { HttpProblem, PROBLEM_CONTENT_TYPE, reasonPhrase } from "../http/problem";

// Node's parser error codes (llhttp's HPE_*, plus node's own time-outs) mapped to the answer the
// client can act on; anything else is a plain malformed request (RFC 9112 §2.2).
function problemFor(code: string | undefined): HttpProblem<HttpProblemCode> {
  if (code === "HPE_HEADER_OVERFLOW") {
    return new HttpProblem({
      status: 431,
      code: "headers_too_large",
      detail: "The request's header section is larger than the server accepts.",
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

const responseStarted = (socket: Duplex) =>
  (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage?.headersSent === true;

/**
 * Answers a request node's HTTP parser refused (`server.on("clientError")`) with a problem document
 * instead of node's bare `400 Bad Request`, then closes the connection: after a framing error the
 * rest of the stream cannot be trusted (RFC 9112 §2.2, §11.2).
 * @param error the parser's error; its `code` (e.g. `HPE_INVALID_METHOD`) picks 400, 408 or 431.
 * @param socket the connection the request came on.
 * @example server.on("clientError", answerClientError)
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  // A reset connection, or one that already has a response in flight, gets nothing more: a second response after the
  // first one's bytes (a 413 sent before a chunk turned out malformed) would be garbage to the client. The same check
  // as node:http's own (its in-flight response on `_httpMessage`).
  if (error.code === "ECONNRESET" || !socket.writable || responseStarted(socket)) {
    socket.destroy();
    return;
  }
  endWithProblem(socket, problemFor(error.code));
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
