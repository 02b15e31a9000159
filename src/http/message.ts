/**
 * The request/response model that every pure module takes and returns. Adapters
 * (`rest-webhooks/node`, `rest-webhooks/fetch`) translate to and from it, so one
 * handler serves node:http and every Fetch runtime.
 */

/** Decoded query parameters: one value as a string, a repeated name as an array. */
export type QueryRecord = Readonly<Record<string, string | readonly string[]>>;

/** Request header fields, names lower-cased, repeated fields joined with ", " (RFC 9110 §5.3). */
export type RequestHeaders = Readonly<Record<string, string | undefined>>;

/** Response header fields; an array is sent as repeated fields (needed for Set-Cookie). */
export type ResponseHeaders = Record<string, string | readonly string[]>;

/** An HTTP request as the pure modules see it. */
export interface HttpRequest {
  /** Upper-case method token, e.g. `GET`. */
  readonly method: string;
  /** The path exactly as sent (still percent-encoded), without the query. */
  readonly path: string;
  /** The raw query string without the leading `?` (empty when none). */
  readonly search: string;
  /** Decoded query parameters. */
  readonly query: QueryRecord;
  /** Header fields with lower-case names. */
  readonly headers: RequestHeaders;
  /** The raw body bytes, exactly as received (empty when there is none). */
  readonly body: Uint8Array;
  /** Peer address as the transport reports it, when known. */
  readonly remoteAddress?: string | undefined;
  /** Aborted when the client goes away, when the adapter can tell. */
  readonly signal?: AbortSignal | undefined;
}

/** Body of a response: bytes, text (sent as UTF-8), or nothing. */
export type ResponseBody = Uint8Array | string | null | undefined;

/** An HTTP response as the pure modules return it. */
export interface HttpResponse {
  status: number;
  headers: ResponseHeaders;
  body?: ResponseBody;
}

/** A request handler: the one shape both adapters serve. */
export type Handler = (request: HttpRequest) => HttpResponse | Promise<HttpResponse>;

/**
 * Builds a JSON response.
 * @example json(201, { id: "u_1" }, { location: "/users/u_1" })
 */
export function json(status: number, value: unknown, headers?: ResponseHeaders): HttpResponse {
  return {
    status,
    headers:
      headers === undefined
        ? { "content-type": "application/json" }
        : { "content-type": "application/json", ...headers },
    body: JSON.stringify(value),
  };
}

/** Builds a response with no content (e.g. 204 or 304). */
export function empty(status: number, headers: ResponseHeaders = {}): HttpResponse {
  return { status, headers, body: null };
}

/** Builds a plain-text response. */
export function text(status: number, value: string, headers: ResponseHeaders = {}): HttpResponse {
  return { status, headers: { "content-type": "text/plain; charset=utf-8", ...headers }, body: value };
}

/** Reads one header field (lower-case name) from a request. */
export function header(request: Pick<HttpRequest, "headers">, name: string): string | undefined {
  return request.headers[name];
}

const encoder = new TextEncoder();

/** The body of a response as bytes (strings are UTF-8 encoded). */
export function bodyBytes(body: ResponseBody): Uint8Array {
  if (body == null) return new Uint8Array(0);
  return typeof body === "string" ? encoder.encode(body) : body;
}
