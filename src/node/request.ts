import type { IncomingMessage, ServerResponse } from "node:http";
import {
  type AdapterOptions,
  badRequestTarget,
  bodyConsumed,
  bodyLimitOf,
  bodyReadFailed,
  bodyTooLarge,
  contentLength,
  type ReadRequestResult,
} from "../http/adapter-options";
import { parseQuery } from "../http/body";
import { removeDotSegments } from "../http/dot-segments";
import type { HttpRequest, QueryRecord, RequestHeaders } from "../http/message";
import { HttpProblem, type HttpProblemCode } from "../http/problem";
import { MOUNT_POINT, RECEIVED_TARGET } from "../http/received-target";
import { isAuthority, splitAbsoluteTarget, userinfoProblem } from "../http/request-target";

const EMPTY = new Uint8Array(0);

// RFC 9112 §3.2: origin-form ("/…") and asterisk-form ("*", OPTIONS) are used as sent; absolute-form is not.
const isAbsoluteForm = (target: string) => target.charCodeAt(0) !== 0x2f /* / */ && target !== "*";
// RFC 3986 §3.1: schemes are case-insensitive.
const HTTP_SCHEME = /^https?:\/\//i;

// RFC 9112 §3.2 has no fragment in a request-target; one sent anyway ends the target there, as in a URL (RFC 3986 §3.5).
function withoutFragment(target: string): string {
  const hash = target.indexOf("#");
  return hash === -1 ? target : target.slice(0, hash);
}

/**
 * The 400 `bad_request_target` for a request target no resource has: an absolute-form one whose authority is not RFC
 * 3986's (`http://[::1/a`, `http://x:99999/a`), names no host (`http:///a`) or has a userinfo (`http://u@a/`, RFC 9110
 * §4.2.4), which would otherwise be routed by its path alone. node's parser has already refused other malformed
 * targets; an origin-form one, the common case, has no authority and pays nothing.
 * The Fetch adapter makes only the userinfo check: a `Request`'s URL is one the runtime's URL parser accepted.
 */
export function targetProblem(raw: string, method: string): HttpProblem<HttpProblemCode> | undefined {
  if (raw === "*") {
    // RFC 9112 §3.2.4: the asterisk-form is only used for a server-wide OPTIONS request.
    if (method === "OPTIONS") return undefined;
    return badRequestTarget(`The request target * is only for OPTIONS (RFC 9112 §3.2.4), not ${method}.`);
  }
  if (!isAbsoluteForm(raw)) return undefined;
  const absolute = splitAbsoluteTarget(raw);
  if (absolute === undefined || !isAuthority(absolute.authority)) {
    return badRequestTarget("The request target is not a valid absolute-URI: its authority is not RFC 3986's.");
  }
  // RFC 9110 §4.2: an origin server's resources have http or https URIs; `ftp://b/x` names none of them, and read as
  // its path alone it would be served as `/x`.
  if (!HTTP_SCHEME.test(raw)) {
    return badRequestTarget("The request target names a URI of another scheme than http or https.");
  }
  // RFC 9110 §4.2.1: an http(s) URI with an empty host is invalid, and its recipient MUST reject it; served, it would
  // go by its path under the Host field that §3.2.2 says to ignore. A uri-host has no ":", so ":443" is a port alone.
  if (absolute.host === undefined || absolute.host.charCodeAt(0) === 0x3a /* : */) {
    return badRequestTarget("The request target is an http(s) URI without a host (RFC 9110 §4.2.1).");
  }
  return userinfoProblem(absolute.authority);
}

/**
 * The path a Fetch runtime's URL gives for the same target: in an http(s) URL's path "\" is "/" (WHATWG URL path
 * state, https://url.spec.whatwg.org/#path-state), and then dot-segments are removed (RFC 3986 §5.2.4). Only the path:
 * a "\" in the query stays as sent, as it does in a URL.
 */
function urlPath(path: string): string {
  // bench/adapters: the node adapter calls this per request; a path without "\" pays one search.
  return removeDotSegments(path.indexOf("\\") === -1 ? path : path.replaceAll("\\", "/"));
}

/**
 * The `path` a {@link NodeRequest} has for the request target `raw`: what the framework integrations match a router
 * against before the request is read.
 */
export function pathOf(raw: string): string {
  const target = originFormOf(raw);
  const q = target.indexOf("?");
  return urlPath(q === -1 ? target : target.slice(0, q));
}

// RFC 9112 §3.2.1, §3.2.2: the origin-form `path [ "?" query ]` of a target, an absolute-form one as the path and
// query it names, without a fragment.
function originFormOf(raw: string): string {
  return (isAbsoluteForm(raw) ? splitAbsoluteTarget(raw)?.originForm : undefined) ?? withoutFragment(raw);
}

// The origin-form of `raw`, its path as `pathOf` gives it; an empty query is no query, as in `search`.
function receivedTargetOf(raw: string): string {
  const target = originFormOf(raw);
  const q = target.indexOf("?");
  if (q === -1) return urlPath(target);
  const path = urlPath(target.slice(0, q));
  return q === target.length - 1 ? path : path + target.slice(q);
}

/** The {@link HttpRequest} over a node:http request; query, signal and peer address are computed on first use. */
export class NodeRequest implements HttpRequest {
  readonly method: string;
  readonly path: string;
  readonly search: string;
  readonly headers: RequestHeaders;
  readonly body: Uint8Array;
  #query: QueryRecord | undefined;
  #signal: AbortSignal | undefined;
  readonly #req: IncomingMessage;
  readonly #res: ServerResponse | undefined;

  constructor(req: IncomingMessage, body: Uint8Array, res: ServerResponse | undefined) {
    // RFC 9112 §3.2.1 origin-form: path [ "?" query ]; an absolute-form target as the path and query it names.
    const raw = req.url ?? "/";
    const absolute = isAbsoluteForm(raw) ? splitAbsoluteTarget(raw) : undefined;
    const target = absolute?.originForm ?? withoutFragment(raw);
    const q = target.indexOf("?");
    this.method = req.method ?? "GET";
    // The path a Fetch runtime's URL gives for the same target ("\" as "/", dot-segments removed).
    this.path = urlPath(q === -1 ? target : target.slice(0, q));
    this.search = q === -1 ? "" : target.slice(q + 1);
    // RFC 9112 §3.2.2: with an absolute-form target the server MUST ignore Host and use the target's authority.
    const host = absolute?.host;
    // node:http gives Set-Cookie, alone of all fields, as an array, even from a request: joined with ", " as every
    // other repeated field (RFC 9110 §5.3) and as a Fetch `Headers` gives it, so the value is the string its type says.
    const cookies = req.headers["set-cookie"];
    if (host === undefined && cookies === undefined) this.headers = req.headers as RequestHeaders;
    else {
      const headers: Record<string, string | string[] | undefined> = { ...req.headers };
      if (host !== undefined) headers.host = host;
      if (cookies !== undefined) headers["set-cookie"] = cookies.join(", ");
      this.headers = headers as RequestHeaders;
    }
    this.body = body;
    this.#req = req;
    this.#res = res;
  }

  get query(): QueryRecord {
    this.#query ??= parseQuery(this.search);
    return this.#query;
  }

  // A getter on the prototype: no cost per request; Express's `originalUrl` when it rewrote `url` below a mount point.
  get [RECEIVED_TARGET](): string | undefined {
    const original: unknown = (this.#req as IncomingMessage & { originalUrl?: unknown }).originalUrl;
    return typeof original === "string" && original !== this.#req.url ? receivedTargetOf(original) : undefined;
  }

  // A getter on the prototype: Express's `baseUrl`, the path of the `app.use(path, ...)` the router is mounted under.
  get [MOUNT_POINT](): string | undefined {
    const base: unknown = (this.#req as IncomingMessage & { baseUrl?: unknown }).baseUrl;
    return typeof base === "string" && base !== "" ? base : undefined;
  }

  // A getter: reading the peer address asks the OS, and most handlers never need it.
  get remoteAddress(): string | undefined {
    return this.#req.socket?.remoteAddress;
  }

  // Created on first use: most handlers never look at it.
  get signal(): AbortSignal | undefined {
    if (this.#signal === undefined && this.#res !== undefined) {
      const controller = new AbortController();
      const res = this.#res;
      if (res.closed && !res.writableFinished) controller.abort();
      else res.once("close", () => !res.writableFinished && controller.abort());
      this.#signal = controller.signal;
    }
    return this.#signal;
  }
}

/** A body read to its end: the bytes, or the 413/400/501/500 problem that ended the reading. */
export type BodyRead = Uint8Array | HttpProblem<HttpProblemCode>;

/** A body as {@link startBody} starts it: the bytes, a 413/400/501/500 problem, or a promise of either. */
export type BodyStart = BodyRead | Promise<BodyRead>;

/**
 * The `cause` of the 500 `body_consumed` for a request whose body was read before the adapter: it names the
 * integration and what to change, for `onError`. Each integration (node, Express, Fastify) has its own.
 */
export type ConsumedCause = (req: IncomingMessage) => Error;

/** The node adapter's {@link ConsumedCause}: a listener called after something read the stream. */
const nodeConsumedCause: ConsumedCause = (req) =>
  new TypeError(
    `rest-webhooks/node: the body of ${req.method} ${req.url} was already read before the adapter (by a body ` +
      'parser, a middleware or your own listener: req.on("data"), req.resume(), for await, pipe), so its exact bytes ' +
      "are gone: a webhook signature cannot be checked on them and the body readers cannot see them. Call the " +
      "adapter's listener with the request before anything reads its body.",
  );

// RFC 9112 §6.1: a coding applied before the final chunked one (gzip, chunked), which node's parser frames by the
// chunks and does not decode. A final coding other than chunked is a framing error node's parser refuses itself, once
// the headers are through (400, §6.3): not answered here, or two answers would go out. RFC 9110 §5.6.1: empty list
// elements do not count.
function undecodedCoding(codings: string): boolean {
  const list = codings
    .split(",")
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== "");
  return list.at(-1) === "chunked" && list.some((coding) => coding !== "chunked");
}

// RFC 9112 §6.1: a server that receives a transfer coding it does not understand SHOULD answer 501; the bytes a
// handler would get are still coded (gzip, chunked: gzip).
function unsupportedTransferCoding(): HttpProblem<HttpProblemCode> {
  return new HttpProblem({
    status: 501,
    code: "unsupported_transfer_coding",
    detail: "The server decodes no request transfer coding but chunked (RFC 9112 §6.1).",
    headers: { connection: "close" },
  });
}

// The body when it is known before reading: none, coded in a way it cannot be read, already read by someone else, or
// over the limit by its declared length. Only a request with a body pays for the stream-state reads below.
function knownBody(req: IncomingMessage, limit: number, consumed: ConsumedCause): BodyRead | undefined {
  const declared = contentLength(req.headers["content-length"]);
  const codings = req.headers["transfer-encoding"];
  // RFC 9112 §6.3: no Content-Length and no Transfer-Encoding means no body, whoever drained the stream.
  if (declared === 0 || (declared === undefined && codings === undefined)) return EMPTY;
  if (codings !== undefined && undecodedCoding(codings)) return unsupportedTransferCoding();
  // Bytes of it went to another reader ('data' emitted, or read()): the 'end' it would wait for may be long past.
  if (req.readableDidRead) return bodyConsumed(consumed(req));
  // Ended with no byte ever read: an empty chunked body someone drained; nothing of it is lost.
  if (req.readableEnded) return EMPTY;
  // Another reader is attached though no byte came yet (a pipe, a 'data' or 'readable' listener, a resume()): it
  // takes the bytes too, and a pipe's backpressure would pause the stream under us, never to end.
  if (req.readableFlowing === true || req.listenerCount("data") > 0 || req.listenerCount("readable") > 0) {
    return bodyConsumed(consumed(req));
  }
  // RFC 9110 §15.5.14: refuse before reading when the declared length is already over.
  if (declared !== undefined && declared > limit) return bodyTooLarge(limit);
  return undefined;
}

/**
 * Whether the adapter will read the body of `req` rather than answer without it (no body, 413 by its declared length,
 * 501 for its transfer coding, 500 when another reader has it): `Expect: 100-continue` earns a 100 only then (RFC
 * 9110 §10.1.1: a server that will answer with a final status first MAY omit the 100, and the client then never
 * sends the body).
 */
export function willReadBody(req: IncomingMessage, limit: number): boolean {
  return knownBody(req, limit, nodeConsumedCause) === undefined;
}

/**
 * Starts reading the body: the bytes at once when there is no body (the hot path stays synchronous),
 * a 413 at once when the declared length is over the limit, a 501 at once for a transfer coding other than chunked,
 * a 500 `body_consumed` at once when something read the stream before (its cause from `consumed`, the node adapter's
 * by default), else a promise.
 */
export function startBody(req: IncomingMessage, limit: number, consumed: ConsumedCause = nodeConsumedCause): BodyStart {
  return knownBody(req, limit, consumed) ?? new Promise((resolve) => collectBody(req, limit, resolve));
}

/**
 * Reads the body and calls `done` with it: in the same tick when it is known before reading (see {@link startBody}),
 * else when it ends. A callback rather than a promise: the adapter's every request with a body saves a promise and a
 * microtask (bench/consumer, bench/shop POST).
 */
export function readBody(req: IncomingMessage, limit: number, done: (read: BodyRead) => void): void {
  const known = knownBody(req, limit, nodeConsumedCause);
  if (known === undefined) collectBody(req, limit, done);
  else done(known);
}

/**
 * Collects a request body up to a limit and settles once — the bytes, 413, or 400 when reading failed — then
 * takes its listeners off the request. Closures over the function's own variables, not a reader object: with a class
 * whose listeners called its methods, V8 promoted ~400 KB to the old generation per scavenge under load and ran ~10
 * full collections where these closures run one (bench/consumer's verify-only handler behind the adapter, 1 KiB,
 * `--trace-gc-nvp`: ~0.5 KB per scavenge, as a bare node:http handler); the collector's threads' CPU per request
 * halved. Which heuristic of V8's the object tripped was not found.
 */
function collectBody(req: IncomingMessage, limit: number, done: (result: BodyRead) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  const settle = (result: BodyRead) => {
    req.off("data", onData);
    req.off("end", onEnd);
    req.off("error", onError);
    req.off("close", onClose);
    done(result);
  };
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) {
      // Stop reading: the 413 goes out without waiting for the rest. Paused before settling, because settling may
      // answer at once (readBody), and the answer resumes the reading to linger (sendAndLinger).
      req.pause();
      settle(bodyTooLarge(limit));
      return;
    }
    chunks.push(chunk);
  };
  const onEnd = () => settle(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
  const onError = (error: Error) => settle(bodyReadFailed(error));
  const onClose = () => settle(bodyReadFailed(new Error("client closed the connection before the body ended")));
  req.on("data", onData);
  req.on("end", onEnd);
  req.on("error", onError);
  req.on("close", onClose);
  // A stream paused before the adapter (req.pause() with nothing read) would not flow for a 'data' listener alone.
  if (req.readableFlowing === false) req.resume();
}

/**
 * Turns a node:http request into an {@link HttpRequest}, reading the body up to the limit.
 * @returns the request, or the problem to answer with: 413 over the limit, 400 for an absolute-form target with an
 * invalid authority or a userinfo, or a body that could not be read, 501 for a transfer coding other than chunked,
 * and 500 `body_consumed` when something read the body before (`req.readableDidRead`) or is still reading it (a pipe, a
 * `'data'` or `'readable'` listener, a `resume()`), whose `cause` says so.
 * @param res when given, the request's `signal` aborts if the client goes away before the response ends.
 */
export async function readRequest(
  req: IncomingMessage,
  options: AdapterOptions = {},
  res?: ServerResponse,
): Promise<ReadRequestResult> {
  const limit = bodyLimitOf(options, "readRequest");
  const refused = targetProblem(req.url ?? "/", req.method ?? "GET");
  if (refused !== undefined) return { ok: false, problem: refused };
  const body = await startBody(req, limit);
  if (body instanceof HttpProblem) return { ok: false, problem: body };
  return { ok: true, request: new NodeRequest(req, body, res) };
}
