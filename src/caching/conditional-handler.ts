import { carryAfterSend } from "../http/after-send";
import { type DescribedResponse, describeMiddleware, type MiddlewareDescription } from "../http/described";
/**
 * A {@link Handler} wrapper that makes a resource's handler conditional (RFC 9110 §13): validators on
 * GET/HEAD responses, 304 when the client's copy is current, 412/428 before an unsafe method runs.
 */
import { bodyBytes, type Handler, type HttpRequest, type HttpResponse, type ResponseHeaders } from "../http/message";
import { isKnownMethod, isSafe } from "../http/methods";
import { isThenable } from "../http/thenable";
import { withMethod } from "../http/with-method";
import { optionalFunction } from "../options/function-option";
import { etagFromBody } from "./etag-generate";
import { parseDateField, tryFormatHttpDate } from "./http-date";
import { evaluatePreconditions, revalidates, type Validators } from "./preconditions";
import { readHeader } from "./response-headers";
import { preconditionResponse } from "./responses";

/** Options for {@link conditional}. */
export interface ConditionalOptions {
  /**
   * The current validators of the request's target resource, or `undefined` when it does not exist.
   * Consulted for unsafe methods before the handler runs, so a stale If-Match never reaches it, and a malformed If-Match
   * or If-None-Match is a 400. Without this option unsafe requests reach the handler unevaluated. GET and HEAD never
   * call it: their validators are the handler's own ETag and Last-Modified response fields.
   */
  validators?: (request: HttpRequest) => Validators | undefined | Promise<Validators | undefined>;
  /**
   * Methods that must carry If-Match, If-None-Match or If-Unmodified-Since, else 428 (RFC 6585 §3);
   * `true` means PUT, PATCH and DELETE. Methods are case-sensitive: a list naming `"put"` or a safe method
   * such as `"GET"` (never required) throws a `TypeError`.
   * @default false
   */
  requirePrecondition?: boolean | readonly string[];
  /**
   * The ETag added to a 200 GET/HEAD response that has a body but no ETag: computed from the body bytes,
   * strong or weak, or not at all. A 200 HEAD response with neither body (a zero-length one counts as none) nor
   * ETag gets the tag of the GET response: the handler runs again as GET (RFC 9110 §9.3.2), and its content is
   * dropped.
   * @default "strong"
   */
  etag?: "strong" | "weak" | false;
  /**
   * The clock (epoch milliseconds), for the §8.8.2.1 Last-Modified bound when the response has no Date
   * and for two-digit rfc850 years.
   * @default Date.now
   */
  now?: () => number;
}

// A policy, not an RFC rule: the methods that replace, modify or delete the target's representation.
const DEFAULT_REQUIRED = ["PUT", "PATCH", "DELETE"];

// The statuses a 304 answers in place of: the representation (200) or a range of it (206, §13.2.2 step 5).
const WHOLE_OR_RANGE = new Set([200, 206]);

function finishRead(request: HttpRequest, response: HttpResponse, options: ConditionalOptions): HttpResponse {
  // §13.2.1: preconditions only apply when the unconditional response would be 2xx.
  if (response.status < 200 || response.status > 299) return response;
  const headers: ResponseHeaders = { ...response.headers };
  let etag = readHeader(headers, "etag");
  // Only a 200 carries the whole representation: a 206's bytes must not become its tag.
  if (etag === undefined && options.etag !== false && response.status === 200 && hasContent(request, response)) {
    etag = etagFromBody(response.body, { weak: options.etag === "weak" });
    headers.etag = etag;
  }
  // One reading of the clock, for the Last-Modified bound and the evaluation alike.
  const now = options.now?.();
  const lastModified = boundLastModified(headers, now);
  const result = evaluatePreconditions(request, { etag, lastModified }, { responseHeaders: headers, now });
  // A 304 stands for a 200 (§15.4.5), and for a 206: §13.2.2 evaluates If-None-Match and If-Modified-Since (steps 3-4)
  // before Range (step 5), so a client whose copy is current gets the 304 whether or not it asked for a range.
  if (result.kind === "proceed" || (result.kind === "not-modified" && !WHOLE_OR_RANGE.has(response.status))) {
    return { ...response, headers };
  }
  // The 304 or 412 answers in place of the handler's response: the handler's after-send work still runs.
  return carryAfterSend(response, preconditionResponse(result) as HttpResponse);
}

// §9.3.2: a HEAD response's content is never sent, so a zero-length one ("", an empty Uint8Array) is no body:
// its SHA-1 is the tag of nothing, not the GET's.
function hasContent(
  request: HttpRequest,
  response: HttpResponse,
): response is HttpResponse & { body: NonNullable<HttpResponse["body"]> } {
  const body = response.body;
  if (body == null) return false;
  return request.method !== "HEAD" || (typeof body === "string" ? body.length : body.byteLength) > 0;
}

// §9.3.2: HEAD's header fields should be GET's. A HEAD answered without content and without ETag
// (the router's HEAD-from-GET, a handler that skips the body) would get no tag: GET computes it.
function headNeedsGet(request: HttpRequest, response: HttpResponse, options: ConditionalOptions): boolean {
  return (
    request.method === "HEAD" &&
    options.etag !== false &&
    response.status === 200 &&
    !hasContent(request, response) &&
    readHeader(response.headers, "etag") === undefined
  );
}

// The GET response finished for the HEAD request, its content dropped and its length kept (§8.6). The client is
// answered for the HEAD, so the HEAD run's after-send callback is the one kept; the GET's is never run.
function finishHeadFromGet(
  request: HttpRequest,
  head: HttpResponse,
  get: HttpResponse,
  options: ConditionalOptions,
): HttpResponse {
  // A GET that does not answer 200 cannot stand for the HEAD: the HEAD's own response is kept.
  if (get.status !== 200 || get.body == null) return finishRead(request, head, options);
  // Read member by member, not spread: the GET's callback (a symbol member) must not come along. Finished for the GET
  // request it answers: a zero-length GET body is content, tagged as the GET's own response is (§9.3.2).
  const asGet = withMethod(request, "GET");
  const finished = finishRead(asGet, { status: get.status, headers: get.headers, body: get.body }, options);
  if (finished.status !== 200 || finished.body == null) return carryAfterSend(head, finished);
  const headers = { ...finished.headers };
  if (readHeader(headers, "content-length") === undefined) {
    headers["content-length"] = String(bodyBytes(finished.body).byteLength);
  }
  return carryAfterSend(head, { status: finished.status, headers, body: null });
}

// §8.8.2.1: Last-Modified must not be later than the message's Date; a later value is replaced by it.
// `now` (the `now` option's reading) also resolves two-digit rfc850 years (§5.6.7), as the evaluation does.
function boundLastModified(headers: ResponseHeaders, now: number | undefined): number | undefined {
  const value = readHeader(headers, "last-modified");
  if (value === undefined) return undefined;
  // §8.8.2: a Last-Modified that is no HTTP-date is no validator; the handler's field is left as it wrote it.
  const modified = parseDateField(value, now);
  if (modified === undefined) return undefined;
  const dateValue = readHeader(headers, "date");
  const date = (dateValue === undefined ? undefined : parseDateField(dateValue, now)) ?? now ?? Date.now();
  if (modified <= date) return modified;
  const second = Math.floor(date / 1000) * 1000;
  const bounded = tryFormatHttpDate(second);
  if (bounded === undefined) return modified;
  for (const name in headers) if (name.toLowerCase() === "last-modified") delete headers[name];
  headers["last-modified"] = bounded;
  return second;
}

function required(method: string, option: ConditionalOptions["requirePrecondition"]): boolean {
  if (option === undefined || option === false) return false;
  return (option === true ? DEFAULT_REQUIRED : option).includes(method);
}

/**
 * A middleware, `(options) => (handler) => handler` like `idempotency()` and `rateLimit()`, that makes a resource's
 * handler conditional (mount it with `router.use`, `resource.use` or an operation's `use`, or call it on a handler):
 * - a 200 GET/HEAD response gets an ETag computed from its body when it has none, a Last-Modified bounded
 *   by its Date (§8.8.2.1), and becomes a bodyless 304 (or a 412) when the request's preconditions say so, as does
 *   a 206 (§13.2.2: If-None-Match and If-Modified-Since are evaluated before Range);
 *   a 200 HEAD response without content or ETag is answered from the GET response, without its content;
 * - an unsafe request is evaluated against `validators(request)` first, and a failed precondition answers
 *   412 (or 428 when required and missing) without running the handler.
 * Works with both adapters, since it is just a {@link Handler}. Inside a router, `routeOf(request).params` (from
 * `rest-webhooks/routing`) gives `validators` the matched path parameters.
 *
 * The check and the write are not atomic: for concurrent writers, also make the store's update conditional
 * on the version the validators reported.
 * @example
 * const notes = router.resource("/notes/{note_id}", (note) => {
 *   note.use(conditional({ validators: (request) => store.validatorsOf(routeOf(request)?.params.note_id) }));
 *   note.read({}, ({ params }) => json(200, store.get(params.note_id)));
 * });
 * @example createServer(conditional({ requirePrecondition: true })(getOrPutDocument)).listen(3000);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13.2 (evaluation) and §9.3.2 (HEAD)
 */
export function conditional(options: ConditionalOptions = {}): (handler: Handler) => Handler {
  checkOptions(options);
  const { validators } = options;
  const middleware =
    (handler: Handler): Handler =>
    (request) => {
      const method = request.method;
      // Synchronous handlers stay synchronous: adapters answer them without a promise.
      if (revalidates(method)) {
        return then(handler(request), (response) =>
          headNeedsGet(request, response, options)
            ? then(handler(withMethod(request, "GET")), (get) => finishHeadFromGet(request, response, get, options))
            : finishRead(request, response, options),
        );
      }
      // RFC 9110 §9.2.1: a safe method changes nothing, so there is no write to guard (§13.2.1: OPTIONS
      // and TRACE select no representation). CONNECT is left to evaluatePreconditions, which ignores it.
      if (isSafe(method)) return handler(request);
      const requirePrecondition = required(method, options.requirePrecondition);
      if (validators === undefined) {
        const headers = request.headers;
        const missing =
          headers["if-match"] === undefined &&
          headers["if-none-match"] === undefined &&
          headers["if-unmodified-since"] === undefined;
        if (requirePrecondition && missing)
          return preconditionResponse({ kind: "precondition-required" }) as HttpResponse;
        return handler(request);
      }
      return then(validators(request), (current) => {
        const result = evaluatePreconditions(request, current, { requirePrecondition, now: options.now?.() });
        return result.kind === "proceed" ? handler(request) : (preconditionResponse(result) as HttpResponse);
      });
    };
  return describeMiddleware(middleware, describeConditional(options));
}

/**
 * What {@link conditional} answers and reads, for OpenAPI: RFC 9110 §13.1 (the request headers), §8.8.2 and §8.8.3
 * (the validators on 2xx reads), §15.4.5 (304), §15.5.13 (412); RFC 6585 §3 (428).
 */
function describeConditional(options: ConditionalOptions): MiddlewareDescription {
  const reads = ["GET", "HEAD"];
  const requires = options.requirePrecondition ?? false;
  // A write's preconditions are evaluated here only against `validators`; without them the handler gets the request.
  const evaluated = (method: string) => revalidates(method) || (!isSafe(method) && options.validators !== undefined);
  // Where a precondition header means something: evaluated, or required (the 428 asks for it).
  const meaningful = (method: string) => evaluated(method) || required(method, requires);
  const responses: Record<number, DescribedResponse> = {
    304: {
      description: "Not Modified: the client's copy is current.",
      problem: false,
      methods: reads,
      headers: {
        ETag: { description: "The current entity tag, as the 200 would send it." },
        "Last-Modified": { description: "When the representation last changed; sent when there is no ETag." },
      },
    },
    412: {
      description: "A precondition (If-Match, If-Unmodified-Since, If-None-Match) failed: nothing was done.",
      methods: evaluated,
    },
    // RFC 9110 §13.1.1, §13.1.2: a write's If-Match / If-None-Match that is not `"*" / #entity-tag`.
    400: {
      description: 'If-Match or If-None-Match is not "*" or a list of quoted entity tags: nothing was done.',
      methods: (method: string) => !isSafe(method) && options.validators !== undefined,
    },
  };
  if (requires !== false) {
    responses[428] = {
      description: "This method needs If-Match (or If-Unmodified-Since): read the resource's ETag first.",
      methods: requires === true ? DEFAULT_REQUIRED : requires,
    };
  }
  return {
    responses,
    successHeaders: {
      ETag: {
        description:
          options.etag === false
            ? "The entity tag of the representation, when the handler gives one."
            : "The entity tag of the representation: the handler's, or one computed from the body.",
        methods: reads,
      },
      "Last-Modified": {
        description: "When the representation last changed, when the handler gives it (never after the Date).",
        methods: reads,
      },
    },
    requestHeaders: {
      "If-None-Match": {
        description: "Answer 304 when one of these ETags is current (reads), 412 on writes.",
        methods: meaningful,
      },
      "If-Match": { description: "Act only when one of these ETags is current (else 412).", methods: meaningful },
      "If-Modified-Since": { description: "Answer 304 when not modified since (reads).", methods: reads },
      "If-Unmodified-Since": { description: "Act only when not modified since (else 412).", methods: meaningful },
    },
  };
}

// Plain-JavaScript mistakes answered at construction, naming the option (and the 0.x shape change).
function checkOptions(options: ConditionalOptions): void {
  if (typeof options === "function") {
    throw new TypeError(
      "conditional(options) returns a middleware: write conditional({ validators })(handler), or resource.use(conditional({ validators })) (the handler-first form was removed in 0.2)",
    );
  }
  if (typeof options !== "object" || options === null) throw new TypeError("conditional: options must be an object");
  const { validators, requirePrecondition, etag, now } = options;
  optionalFunction(
    "conditional",
    "validators",
    validators,
    "a function (request) => { etag?, lastModified? } | undefined",
  );
  if (
    requirePrecondition !== undefined &&
    typeof requirePrecondition !== "boolean" &&
    !(Array.isArray(requirePrecondition) && requirePrecondition.every((m) => typeof m === "string"))
  ) {
    throw new TypeError("conditional: requirePrecondition must be true, false or a list of methods");
  }
  // A list entry that can never match would silently switch the 428 off for the method the caller meant.
  for (const method of Array.isArray(requirePrecondition) ? requirePrecondition : []) {
    const upper = method.toUpperCase();
    if (method !== upper && isKnownMethod(upper)) {
      // RFC 9110 §9.1: methods are case-sensitive, so "put" is not PUT.
      throw new TypeError(
        `conditional: requirePrecondition lists "${method}": methods are case-sensitive, write "${upper}"`,
      );
    }
    if (isSafe(method)) {
      // RFC 6585 §3 guards against lost updates: a safe method (§9.2.1) changes nothing, so it is never required.
      throw new TypeError(`conditional: requirePrecondition lists "${method}", a safe method, which is never required`);
    }
  }
  if (etag !== undefined && etag !== false && etag !== "strong" && etag !== "weak") {
    throw new TypeError('conditional: etag must be "strong", "weak" or false');
  }
  optionalFunction("conditional", "now", now);
}

function then<T, R>(value: T | Promise<T>, next: (value: T) => R | Promise<R>): R | Promise<R> {
  return isThenable(value) ? Promise.resolve(value).then(next) : next(value);
}
