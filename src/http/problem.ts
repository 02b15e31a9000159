import type { HttpResponse, ResponseHeaders } from "./message";

/** The media type of RFC 9457 §3. */
export const PROBLEM_CONTENT_TYPE = "application/problem+json";

/**
 * Every stable `code` that `rest-webhooks/http` and the adapters (`rest-webhooks/node`,
 * `rest-webhooks/fetch`) put on the problems they create; other modules document their own.
 */
export const HTTP_PROBLEM_CODES = [
  // 413: the body is over the adapter's `bodyLimit` (RFC 9110 §15.5.14).
  "body_too_large",
  // 400: the body could not be read (the client went away, or the stream failed).
  "body_read_failed",
  // 400: the Fetch adapter could not parse the request URL, or the node adapter got an absolute-form target whose
  // authority is not RFC 3986's (RFC 9112 §3.2.2), such as http://[::1/a or http://x:99999/a.
  "bad_request_target",
  // 400: a JSON or form body was expected and the body is empty.
  "body_required",
  // 400: the body is not UTF-8 or not JSON (RFC 8259).
  "malformed_json",
  // 400: a form body is not UTF-8.
  "malformed_form",
  // 400: a JSON body nests arrays and objects deeper than the reader's `maxDepth`.
  "json_too_deep",
  // 422: a body string is not I-JSON (a lone surrogate, RFC 7493 §2.1) or holds a NUL; `errors` names where.
  "invalid_string",
  // 422: a JSON body has an own __proto__ or a constructor.prototype (prototype poisoning); `errors` names where.
  // 400 for a query parameter named __proto__ on a routed operation, whatever its query schema (`in: "query"`).
  "forbidden_member",
  // 422: a JSON body gives a member name twice in one object (RFC 7493 §2.3); `errors` names where.
  "duplicate_member",
  // 400: a query parameter is not percent-encoded UTF-8 (RFC 3986 §2.1) or decodes to a NUL.
  "malformed_query",
  // 415: the Content-Type is not one the reader accepts (RFC 9110 §15.5.16).
  "unsupported_media_type",
  // 415: the body is in a content coding the readers do not decode: a Content-Encoding other than identity (§8.4).
  "unsupported_content_coding",
  // 422 (or 400 for a query): zod validation failed; `errors` lists the fields.
  "validation_failed",
  // 500: a handler threw something other than an {@link HttpProblem}; no detail leaks.
  "internal_error",
  // 500: an adapter got a request whose body was read before it (a body parser, a middleware, a hook): the app's mistake.
  "body_consumed",
  // 400: node's HTTP parser refused the request before any handler ran (RFC 9112 §2.2).
  "malformed_request",
  // 431: the request's header section is over node's limit (RFC 6585 §5).
  "headers_too_large",
  // 414: the request-target is over node's header limit (RFC 9112 §3, RFC 9110 §15.5.15).
  "uri_too_long",
  // 408: the request was not received in time (RFC 9110 §15.5.9).
  "request_timeout",
  // 400: an HTTP/1.1 request without Host, or a request with more than one Host or an invalid one (RFC 9112 §3.2).
  "invalid_host",
  // 417: an Expect other than 100-continue, which the server cannot meet (RFC 9110 §10.1.1, §15.5.18).
  "expectation_failed",
  // 501: a method the server does not implement for any resource: CONNECT, as it is no proxy (RFC 9110 §9.3.6, §15.6.2).
  "method_not_implemented",
  // 501: a request transfer coding other than chunked, which the server cannot decode (RFC 9112 §6.1).
  "unsupported_transfer_coding",
  // 505: a request line with an HTTP major version other than 1 (RFC 9110 §15.6.6).
  "http_version_not_supported",
] as const;

/** A stable `code` of a problem created by `rest-webhooks/http` or an adapter. */
export type HttpProblemCode = (typeof HTTP_PROBLEM_CODES)[number];

/** Members of an RFC 9457 problem document. */
export interface ProblemInit<C extends string = string> {
  /** HTTP status code (§3.1.4). */
  status: number;
  /** A stable machine-readable code, sent as the `code` extension member. */
  code: C;
  /** §3.1.3: short summary of the problem type; defaults to the status reason phrase. */
  title?: string;
  /** §3.1.4: explanation specific to this occurrence, written for the client developer. */
  detail?: string;
  /** §3.1.1: URI reference identifying the problem type; `about:blank` when absent. */
  type?: string;
  /** §3.1.5: URI reference identifying this occurrence. */
  instance?: string;
  /** §3.2: extension members, serialised beside the standard ones. */
  extensions?: Record<string, unknown>;
  /** Extra response header fields (e.g. `Allow`, `Retry-After`, `WWW-Authenticate`). */
  headers?: ResponseHeaders;
  /** The underlying error, kept for logs and never serialised. */
  cause?: unknown;
}

/** An RFC 9457 problem document as a JSON value. */
export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  code: string;
  [extension: string]: unknown;
}

// RFC 9457 §3.1 members, plus our `code`: extension members with these names are dropped.
const STANDARD_MEMBERS = new Set(["type", "title", "status", "detail", "instance", "code"]);

// Every RFC 9110 §15 reason phrase (§15.1: the status code registry), plus RFC 6585 §3–6 (428, 429, 431, 511): the
// default `title` of a problem and the node adapter's status line. 306 and 418 are "(Unused)" in §15.4.7 and §15.5.19,
// so they get the generic phrase. These are data, not placeholders: 501 is the status a server sends for a method it
// does not implement.
const REASONS: Record<number, string> = {
  100: "Continue",
  101: "Switching Protocols",
  200: "OK",
  201: "Created",
  202: "Accepted",
  203: "Non-Authoritative Information",
  204: "No Content",
  205: "Reset Content",
  206: "Partial Content",
  300: "Multiple Choices",
  301: "Moved Permanently",
  302: "Found",
  303: "See Other",
  304: "Not Modified",
  305: "Use Proxy",
  307: "Temporary Redirect",
  308: "Permanent Redirect",
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  407: "Proxy Authentication Required",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  411: "Length Required",
  412: "Precondition Failed",
  413: "Content Too Large",
  414: "URI Too Long",
  415: "Unsupported Media Type",
  416: "Range Not Satisfiable",
  417: "Expectation Failed",
  421: "Misdirected Request",
  422: "Unprocessable Content",
  426: "Upgrade Required",
  428: "Precondition Required",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
  505: "HTTP Version Not Supported",
  511: "Network Authentication Required",
};

/**
 * The RFC 9110 §15 (or RFC 6585) reason phrase for `status`; for an unregistered or "(Unused)" code, a generic one:
 * "Client Error" (4xx), "Server Error" (5xx) or "Status".
 * @example reasonPhrase(416) // "Range Not Satisfiable"
 */
export function reasonPhrase(status: number): string {
  return REASONS[status] ?? (status >= 500 ? "Server Error" : status >= 400 ? "Client Error" : "Status");
}

/**
 * An HTTP error that leaves the server as an RFC 9457 problem document.
 * Throw it from a handler, or return `problem.toResponse()`.
 *
 * @example throw new HttpProblem({ status: 404, code: "user_not_found", detail: "No user u_1." })
 * @see https://www.rfc-editor.org/rfc/rfc9457
 */
export class HttpProblem<C extends string = string> extends Error {
  readonly status: number;
  /** The stable machine-readable code; a literal type when known (see {@link HttpProblemCode}). */
  readonly code: C;
  readonly title: string;
  readonly type: string;
  readonly detail: string | undefined;
  readonly instance: string | undefined;
  readonly extensions: Readonly<Record<string, unknown>>;
  readonly headers: Readonly<ResponseHeaders>;

  // NoInfer: `code` alone gives `string`, so a variable can hold any problem; an annotated
  // `HttpProblem<HttpProblemCode>` (as this package's own factories have) checks the code.
  constructor(init: ProblemInit<NoInfer<C>>) {
    super(init.detail ?? init.title ?? reasonPhrase(init.status), { cause: init.cause });
    this.name = "HttpProblem";
    if (!Number.isInteger(init.status) || init.status < 400 || init.status > 599) {
      throw new TypeError(`HttpProblem status must be an integer in 400..599, got ${init.status}`);
    }
    this.status = init.status;
    this.code = init.code;
    this.title = init.title ?? reasonPhrase(init.status);
    this.type = init.type ?? "about:blank";
    this.detail = init.detail;
    this.instance = init.instance;
    this.extensions = init.extensions ?? {};
    this.headers = init.headers ?? {};
  }

  /** The problem document (RFC 9457 §3); extension members never override standard ones. */
  toJSON(): ProblemDocument {
    const doc = { type: this.type, title: this.title, status: this.status } as ProblemDocument;
    if (this.detail !== undefined) doc.detail = this.detail;
    if (this.instance !== undefined) doc.instance = this.instance;
    doc.code = this.code;
    for (const name in this.extensions) {
      // RFC 9457 §3.2: extensions sit beside the standard members and never redefine them.
      if (!Object.hasOwn(this.extensions, name) || STANDARD_MEMBERS.has(name)) continue;
      // defineProperty, not assignment: an extension named "__proto__" stays a plain member.
      Object.defineProperty(doc, name, {
        value: this.extensions[name],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return doc;
  }

  /** The problem as an `application/problem+json` response. */
  toResponse(): HttpResponse {
    const headers: ResponseHeaders = {};
    for (const [name, value] of Object.entries(this.headers)) {
      // The problem's media type replaces a Content-Type given in any case: two would be two fields on the wire.
      if (name.toLowerCase() !== "content-type") headers[name] = value;
    }
    headers["content-type"] = PROBLEM_CONTENT_TYPE;
    return {
      status: this.status,
      headers,
      body: JSON.stringify(this.toJSON()),
    };
  }
}

/** Whether `value` is an {@link HttpProblem} (also across duplicate copies of this package). */
export function isHttpProblem(value: unknown): value is HttpProblem {
  return (
    value instanceof HttpProblem ||
    (value instanceof Error && value.name === "HttpProblem" && typeof (value as HttpProblem).toResponse === "function")
  );
}

/** Shorthand for building a problem response without throwing. */
export function problem(init: ProblemInit): HttpResponse {
  return new HttpProblem(init).toResponse();
}

/** The 500 problem sent for an unexpected error: no message, no stack (RFC 9457 §5: no implementation details). */
export function internalErrorResponse(): HttpResponse {
  const internal: HttpProblem<HttpProblemCode> = new HttpProblem({
    status: 500,
    code: "internal_error",
    detail: "The server could not complete the request.",
  });
  return internal.toResponse();
}
