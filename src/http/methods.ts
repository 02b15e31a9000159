/**
 * The method table of RFC 9110 §9.2 (plus PATCH, RFC 5789): the one place the method rules live.
 */

/** Properties of a method as RFC 9110 §9.2 defines them. */
export interface MethodProperties {
  /** §9.2.1: the client requests no state change. */
  readonly safe: boolean;
  /** §9.2.2: the intended effect of N identical requests equals that of one. */
  readonly idempotent: boolean;
  /** §9.2.3: responses may be stored by a cache. */
  readonly cacheable: boolean;
  /** Whether a request body has defined semantics (GET/HEAD/DELETE/OPTIONS/TRACE have none, §9.3). */
  readonly requestBody: "defined" | "undefined" | "forbidden";
}

/** RFC 9110 §9.3 and RFC 5789 §2. */
export const METHODS = {
  GET: { safe: true, idempotent: true, cacheable: true, requestBody: "undefined" },
  HEAD: { safe: true, idempotent: true, cacheable: true, requestBody: "undefined" },
  // RFC 9110 §9.3.3: cacheable only with explicit freshness and a matching Content-Location.
  POST: { safe: false, idempotent: false, cacheable: true, requestBody: "defined" },
  PUT: { safe: false, idempotent: true, cacheable: false, requestBody: "defined" },
  DELETE: { safe: false, idempotent: true, cacheable: false, requestBody: "undefined" },
  CONNECT: { safe: false, idempotent: false, cacheable: false, requestBody: "undefined" },
  OPTIONS: { safe: true, idempotent: true, cacheable: false, requestBody: "defined" },
  // RFC 9110 §9.3.8: a client must not send content in TRACE.
  TRACE: { safe: true, idempotent: true, cacheable: false, requestBody: "forbidden" },
  // RFC 5789 §2: neither safe nor idempotent (a merge patch of absolute values is, see routing).
  PATCH: { safe: false, idempotent: false, cacheable: false, requestBody: "defined" },
} as const satisfies Record<string, MethodProperties>;

/** A method the table knows. */
export type Method = keyof typeof METHODS;

/** Every method in the table, in RFC order. */
export const METHOD_NAMES = Object.keys(METHODS) as readonly Method[];

/** Whether `method` (case-sensitive, RFC 9110 §9.1) is in the table. */
export function isKnownMethod(method: string): method is Method {
  return Object.hasOwn(METHODS, method);
}

/** The properties of `method`, or `undefined` for an extension method. */
export function methodProperties(method: string): MethodProperties | undefined {
  return isKnownMethod(method) ? METHODS[method] : undefined;
}

/** RFC 9110 §9.2.1; unknown methods are treated as unsafe. */
export function isSafe(method: string): boolean {
  return methodProperties(method)?.safe ?? false;
}

/** RFC 9110 §9.2.2; unknown methods are treated as not idempotent. */
export function isIdempotent(method: string): boolean {
  return methodProperties(method)?.idempotent ?? false;
}

/** RFC 9110 §9.2.3. */
export function isCacheable(method: string): boolean {
  return methodProperties(method)?.cacheable ?? false;
}

/**
 * Whether content in a request with this method has defined semantics (RFC 9110 §9.3): POST, PUT, PATCH
 * and OPTIONS; not GET, HEAD, DELETE, CONNECT or TRACE. Extension methods are assumed to define it.
 * @example definesRequestContent("PUT") // true
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-9.3
 */
export function definesRequestContent(method: string): boolean {
  return (methodProperties(method)?.requestBody ?? "defined") === "defined";
}

/**
 * The method whose handler answers `method` when a resource does not declare it: HEAD is answered as GET
 * without content (RFC 9110 §9.3.2). `undefined` for every other method.
 * @example answeredBy("HEAD") // "GET"
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-9.3.2
 */
export function answeredBy(method: string): Method | undefined {
  return method === "HEAD" ? "GET" : undefined;
}

/**
 * Orders method names as the table does (RFC 9110 §9.3, then PATCH); extension methods follow in
 * code-point order. For `Allow` lists that read the same on every response.
 * @example ["PATCH", "GET", "PROPFIND"].sort(compareMethods) // ["GET", "PATCH", "PROPFIND"]
 */
export function compareMethods(a: string, b: string): number {
  const ia = isKnownMethod(a) ? METHOD_NAMES.indexOf(a) : -1;
  const ib = isKnownMethod(b) ? METHOD_NAMES.indexOf(b) : -1;
  if (ia !== -1 || ib !== -1) return (ia === -1 ? METHOD_NAMES.length : ia) - (ib === -1 ? METHOD_NAMES.length : ib);
  return a < b ? -1 : a > b ? 1 : 0;
}
