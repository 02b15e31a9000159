import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { bodyLimitOf } from "../http/adapter-options";
import { takeAfterSend } from "../http/after-send";
import { guardedReporter } from "../http/guarded-report";
import type { Handler, HttpResponse } from "../http/message";
import { HttpProblem, internalErrorResponse, isHttpProblem } from "../http/problem";
import { isThenable } from "../http/thenable";
import { answerClientError } from "./client-error";
import { sendAndLinger } from "./linger";
import { answerConnect, expectationFailed, messageProblem } from "./protocol";
import { type BodyRead, type BodyStart, NodeRequest, readBody, targetProblem, willReadBody } from "./request";
import { sendOrDestroy, sendResponse } from "./response";
import { type NodeAdapterOptions, serverLimits } from "./server-limits";

const EMPTY = new Uint8Array(0);

/** A node:http `request` listener. */
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

// The request/response translation once the body is read: the handler's answer, or the problem that ended the read.
function bodyAnswerer(
  handler: Handler,
  options: NodeAdapterOptions,
): (req: IncomingMessage, res: ServerResponse, read: BodyRead) => void {
  const onError = guardedReporter(options);
  const bounds = serverLimits(options.limits);
  const refuse = (req: IncomingMessage, res: ServerResponse, problem: HttpProblem) => {
    // A body refused unread (413, 501 for its transfer coding): the connection closes once the client stops sending.
    if (problem.headers.connection === "close") return sendAndLinger(req, res, problem.toResponse(), bounds);
    if (problem.status >= 500) {
      // A 500 here is the app's mistake (a body read before the adapter): its cause says what to change. The request
      // as far as it can be told (its body is gone), so `onError` can say which route.
      onError(problem.cause ?? problem, new NodeRequest(req, EMPTY, res));
      // RFC 9112 §9.3: a server MUST read the entire request body or close the connection. The rest of a body read
      // in part and left paused would stall the connection's next request: discarded, as node:http does when nobody
      // reads a body.
      req.resume();
    }
    sendOrDestroy(res, problem.toResponse());
  };

  const failed = (res: ServerResponse, request: NodeRequest | undefined, error: unknown) => {
    let reported = error;
    if (isHttpProblem(error)) {
      try {
        return sendResponse(res, error.toResponse());
      } catch (refused) {
        // A header of the problem's that node:http refuses: the handler's mistake, answered as any other.
        reported = refused;
      }
    }
    onError(reported, request);
    sendOrDestroy(res, internalErrorResponse());
  };

  const finish = (res: ServerResponse, request: NodeRequest, response: HttpResponse) => {
    let callback: (() => void) | undefined;
    try {
      // Inside the try: a handler that returned no response at all (a JavaScript caller) gets its 500 too, where a
      // throw here would escape the listener and end the process.
      callback = takeAfterSend(response);
      sendResponse(res, response);
    } catch (error) {
      // The callback belongs to the response that could not be sent, not to the 500 sent instead.
      failed(res, request, error);
      return;
    }
    if (callback === undefined) return;
    const run = () => {
      try {
        callback();
      } catch (error) {
        onError(error, request);
      }
    };
    // 'finish': the whole response was handed to the operating system. A connection that breaks
    // first never finishes, and the callback does not run.
    if (res.writableFinished) run();
    else res.once("finish", run);
  };

  // Synchronous handlers are answered in the same tick: no promise on the hot path.
  const run = (req: IncomingMessage, res: ServerResponse, body: Uint8Array) => {
    const request = new NodeRequest(req, body, res);
    let result: HttpResponse | Promise<HttpResponse>;
    try {
      result = handler(request);
    } catch (error) {
      failed(res, request, error);
      return;
    }
    if (isThenable(result)) {
      result.then(
        (response) => finish(res, request, response),
        (error: unknown) => failed(res, request, error),
      );
    } else {
      finish(res, request, result as HttpResponse);
    }
  };

  return (req, res, read) => {
    if (read instanceof HttpProblem) return refuse(req, res, read);
    // After the body, whole: the connection stays usable.
    const target = targetProblem(req.url ?? "/", req.method ?? "GET");
    if (target === undefined) run(req, res, read);
    else sendOrDestroy(res, target.toResponse());
  };
}

/**
 * The node adapter's request/response translation for a request whose body is already started: what the framework
 * integrations (`rest-webhooks/express`, `/fastify`) call with a body they obtained another way. A body over the
 * limit gets its 413 with a lingering close (see {@link adapt}). Internal to the package.
 */
export function nodeDispatcher(
  handler: Handler,
  options: NodeAdapterOptions = {},
): (req: IncomingMessage, res: ServerResponse, body: BodyStart) => void {
  const answer = bodyAnswerer(handler, options);
  return (req, res, body) => {
    if (isThenable(body)) body.then((read) => answer(req, res, read));
    else answer(req, res, body);
  };
}

/**
 * Adapts a {@link Handler} to a node:http request listener. A thrown {@link HttpProblem} is sent as its
 * problem document; any other error goes to `onError` and the client gets a bare 500 problem. A
 * response's after-send callback (`withAfterSend`) runs on the response's `'finish'` event. A body over
 * `bodyLimit` gets its 413 at once, and the connection closes once the client stops sending (within
 * `limits.lingerMs` / `limits.lingerBytes`), so the client reads the 413 rather than a reset.
 * @param options the body limit, error reporting and the lingering bounds (`limits`).
 * @example http.createServer(adapt(handler)).listen(3000)
 */
export function adapt(handler: Handler, options: NodeAdapterOptions = {}): RequestListener {
  const limit = bodyLimitOf(options, "adapt");
  const answer = bodyAnswerer(handler, options);
  return (req, res) => readBody(req, limit, (read) => answer(req, res, read));
}

/**
 * Creates a node:http server serving `handler`. Repeated request header fields are joined with ", "
 * (RFC 9110 §5.3), `Expect: 100-continue` with a declared body over the limit gets the 413 instead
 * of the 100 (RFC 9110 §10.1.1), and one with a transfer coding other than chunked its 501, so the client never
 * sends it; a request node's parser refuses (an invalid method token, a malformed header) gets a problem document
 * ({@link answerClientError}).
 * So do the requests node:http would answer with a bare status or no answer at all, each with `Connection: close`:
 * an HTTP/1.1 request without Host, or any with a repeated or invalid Host (400 `invalid_host`, RFC 9112 §3.2), an
 * `Expect` other than 100-continue (417 `expectation_failed`, RFC 9110 §10.1.1), CONNECT (501
 * `method_not_implemented`, RFC 9110 §9.3.6) and an HTTP version other than 1.x (505 `http_version_not_supported`).
 * Time-outs are on by default ({@link DEFAULT_SERVER_LIMITS}): an idle keep-alive connection closes after 5 s, a
 * connection that has not sent a whole header section after 10 s and a request whose body has not ended after 30 s
 * get a 408 problem and are closed.
 * @param options the adapter's options and `limits`, overrides of {@link DEFAULT_SERVER_LIMITS}.
 * @example createServer(handler, { limits: { headersMs: 5_000 } }).listen(3000, "127.0.0.1")
 */
export function createServer(handler: Handler, options: NodeAdapterOptions = {}): Server {
  const limits = serverLimits(options.limits);
  const limit = bodyLimitOf(options, "createServer");
  const listener = adapt(handler, options);
  const refuse = (req: IncomingMessage, res: ServerResponse, problem: HttpProblem) =>
    sendAndLinger(req, res, problem.toResponse(), limits);
  const serve: RequestListener = (req, res) => {
    const problem = messageProblem(req);
    if (problem === undefined) listener(req, res);
    else refuse(req, res, problem);
  };
  const server = createHttpServer(
    {
      joinDuplicateHeaders: true,
      // node's own check answers a bare 400: messageProblem answers it, and a repeated or invalid Host too.
      requireHostHeader: false,
      keepAliveTimeout: limits.idleMs,
      headersTimeout: limits.headersMs,
      requestTimeout: limits.requestMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
    },
    serve,
  );
  // node:http asks the OS for a socket's peer address when it is first read, then keeps it; once the client has reset
  // the connection the OS no longer knows it, and clientIp (the rate limiter's default key) read undefined. Read as
  // the connection opens, it is there for every request on it.
  server.on("connection", (socket: Socket) => void socket.remoteAddress);
  server.on("clientError", answerClientError);
  server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => {
    // Refused before the 100: the client never sends the body.
    const problem = messageProblem(req);
    if (problem !== undefined) return refuse(req, res, problem);
    // A body refused unread (over the limit by its Content-Length, a transfer coding other than chunked) gets its
    // answer instead of the 100, so the client never sends it.
    if (willReadBody(req, limit)) res.writeContinue();
    listener(req, res);
  });
  // Without this listener node:http answers a bare 417.
  server.on("checkExpectation", (req: IncomingMessage, res: ServerResponse) =>
    refuse(req, res, messageProblem(req) ?? expectationFailed()),
  );
  // Without this listener node:http destroys the socket of a CONNECT unanswered. An Upgrade request needs none: with
  // no 'upgrade' listener node:http serves it as a plain request (RFC 9110 §7.8: a server MAY ignore Upgrade).
  server.on("connect", (_req: IncomingMessage, socket: Duplex) => answerConnect(socket, limits));
  return server;
}
