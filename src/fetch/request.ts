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
import type { HttpRequest, QueryRecord, RequestHeaders } from "../http/message";
import { trimOws } from "../http/ows";
import { HttpProblem, type HttpProblemCode } from "../http/problem";
import { splitAbsoluteTarget, userinfoProblem } from "../http/request-target";

const EMPTY = new Uint8Array(0);

/** The {@link HttpRequest} over a Fetch `Request`; the query is decoded on first use. */
class FetchRequest implements HttpRequest {
  readonly method: string;
  readonly path: string;
  readonly search: string;
  readonly headers: RequestHeaders;
  readonly body: Uint8Array;
  readonly signal: AbortSignal;
  readonly remoteAddress: string | undefined = undefined;
  #query: QueryRecord | undefined;

  constructor(request: Request, target: string, headers: RequestHeaders, body: Uint8Array) {
    const q = target.indexOf("?");
    this.method = request.method;
    this.path = q === -1 ? target : target.slice(0, q);
    this.search = q === -1 ? "" : target.slice(q + 1);
    this.headers = headers;
    this.body = body;
    this.signal = request.signal;
  }

  get query(): QueryRecord {
    this.#query ??= parseQuery(this.search);
    return this.#query;
  }
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/**
 * The `cause` of the 500 `body_consumed` ({@link bodyConsumed}) for a body read before the adapter (a framework's
 * `c.req.json()`, a logging middleware): it names the fix, for the adapter to report to `onError`.
 */
function consumedCause(request: Request): TypeError {
  return new TypeError(
    `rest-webhooks/fetch: the body of ${request.method} ${request.url} was already read (request.bodyUsed) or ` +
      "locked before the adapter, so its exact bytes are gone: a webhook signature cannot be checked on them and " +
      "the body readers cannot see them. Hand the adapter the untouched Request (in Hono, c.req.raw without " +
      "calling c.req.json() or a validator first), or a clone made before the body was read (request.clone()).",
  );
}

function clientGone(signal: AbortSignal): Error {
  return new Error("the client went away (request.signal aborted) before the body ended", { cause: signal.reason });
}

/**
 * The length a Content-Length field declares, `undefined` without one, `NaN` when it declares none. Fetch joins
 * repeated field lines into one list: RFC 9110 §8.6 lets a recipient read equal values (`5, 5`) as one; differing or
 * malformed ones (`5, 6`) frame no body.
 */
function declaredLength(value: string | null): number | undefined {
  if (value === null) return undefined;
  if (!value.includes(",")) return contentLength(value);
  let declared: number | undefined;
  for (const member of value.split(",")) {
    const length = contentLength(trimOws(member));
    if (declared !== undefined && length !== declared) return Number.NaN;
    declared = length;
  }
  return declared;
}

// RFC 9112 §6.3 (5): an invalid Content-Length makes the framing invalid, and a server MUST answer 400 and close;
// node's parser refuses the same requests (400 `malformed_request`).
function invalidContentLength(): HttpProblem<HttpProblemCode> {
  return new HttpProblem({
    status: 400,
    code: "malformed_request",
    detail: "The request's Content-Length is not one decimal value (RFC 9110 §8.6, RFC 9112 §6.3).",
    headers: { connection: "close" },
  });
}

async function readBody(request: Request, limit: number): Promise<Uint8Array | HttpProblem<HttpProblemCode>> {
  const declared = declaredLength(request.headers.get("content-length"));
  if (Number.isNaN(declared)) {
    await request.body?.cancel().catch(() => undefined);
    return invalidContentLength();
  }
  if (request.body === null) return EMPTY;
  if (request.bodyUsed || request.body.locked) return bodyConsumed(consumedCause(request));
  // RFC 9110 §15.5.14: refuse before reading when the declared length is already over.
  if (declared !== undefined && declared > limit) {
    await request.body.cancel().catch(() => undefined);
    return bodyTooLarge(limit);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  const signal = request.signal;
  // The client went away (the runtime aborts the Request's signal): a body whose source stays open would otherwise
  // hold this read, and the request, forever. The cancel ends the pending read, which then reads as done: the flag
  // tells that from the body's end (a body that did end before the abort is served, as node serves it).
  let aborted = false;
  const onAbort = () => {
    aborted = true;
    reader.cancel(signal.reason).catch(() => undefined);
  };
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (aborted) return bodyReadFailed(clientGone(signal));
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => undefined);
        return bodyTooLarge(limit);
      }
      chunks.push(value);
    }
  } catch (error) {
    return bodyReadFailed(aborted ? clientGone(signal) : error);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
  return size === 0 ? EMPTY : concat(chunks, size);
}

/**
 * Turns a Fetch `Request` into an {@link HttpRequest}, reading the body up to the limit.
 * @returns the request, or the problem to answer with: 413 over the limit, 400 for an unreadable URL or body (a
 * client that went away before the body ended, aborting `request.signal`, included: the read stops then), for a URL
 * with a userinfo (`bad_request_target`) and for a Content-Length that is not one value (`malformed_request`), and
 * 500 `body_consumed` when the body was already read before (`request.bodyUsed`) or locked, whose `cause` says so.
 */
export async function readRequest(request: Request, options: AdapterOptions = {}): Promise<ReadRequestResult> {
  // No authority check (isAuthority, as the node adapter makes): the runtime's URL parser refused an invalid one
  // before this Request existed.
  const absolute = splitAbsoluteTarget(request.url);
  if (absolute === undefined) return { ok: false, problem: badRequestTarget(`Cannot parse the URL "${request.url}".`) };
  // Fetch's Request constructor refuses credentials; a runtime that builds its Request otherwise may not.
  const userinfo = userinfoProblem(absolute.authority);
  if (userinfo !== undefined) return { ok: false, problem: userinfo };
  const target = absolute.originForm;
  const body = await readBody(request, bodyLimitOf(options, "readRequest"));
  if (body instanceof HttpProblem) return { ok: false, problem: body };
  const headers: Record<string, string> = {};
  // Fetch already lower-cases names and joins repeated fields with ", " (RFC 9110 §5.3), all but Set-Cookie, whose
  // values it yields one by one ("sort and combine"): joined here too, as the node adapter joins them.
  request.headers.forEach((value, name) => {
    const seen = headers[name];
    headers[name] = seen === undefined ? value : `${seen}, ${value}`;
  });
  return { ok: true, request: new FetchRequest(request, target, headers, body) };
}
