import { requiredFunction } from "../options/function-option";

/**
 * What a middleware can answer, said where the middleware is made, so an OpenAPI document lists it for every
 * operation the middleware wraps (the router reads it from each layer: `router.use`, `resource.use`, `use` of an
 * operation). A middleware is still a plain function; the description rides on it under a registered symbol.
 */

/** The methods a described response or header applies to: a list (upper case) or a test. @default every method */
export type DescribedMethods = readonly string[] | ((method: string) => boolean);

/** A header of a response, in OpenAPI terms (OpenAPI 3.1 §4.8.21). */
export interface DescribedHeader {
  description: string;
  /** A JSON Schema of the value. @default { type: "string" } */
  schema?: { [keyword: string]: unknown };
  /** Only on operations of these methods. */
  methods?: DescribedMethods;
  /**
   * As a request header: whether a request without it is refused (OpenAPI 3.1 §4.8.12.2 `required`). Ignored on
   * response headers.
   * @default false
   */
  required?: boolean;
  /**
   * As one of a middleware's `successHeaders`: the statuses of the operation's own answers it is on, where not only
   * the 2xx (the idempotency middleware's `Idempotent-Replayed` is on every answer it stores and replays, a 422
   * included). Statuses only a middleware answers (a 401, a 409) never get it. Ignored elsewhere.
   * @default the 2xx
   */
  statuses?: (status: number) => boolean;
}

/** Whether something described for `methods` applies to an operation of `method`. */
export function appliesTo(methods: DescribedMethods | undefined, method: string): boolean {
  if (methods === undefined) return true;
  return typeof methods === "function" ? methods(method) : methods.includes(method);
}

/** A status the middleware may answer instead of the operation (its body a problem document, RFC 9457). */
export interface DescribedResponse {
  description: string;
  headers?: Readonly<Record<string, DescribedHeader>>;
  /** Whether the body is `application/problem+json`. @default true for 4xx and 5xx */
  problem?: boolean;
  /** Only on operations of these methods. */
  methods?: DescribedMethods;
}

/** An OpenAPI 3.1 Security Scheme Object (§4.8.27): `http` bearer/basic, `apiKey`, `oauth2`, `openIdConnect`. */
export type SecurityScheme =
  | { type: "http"; scheme: string; bearerFormat?: string; description?: string }
  | { type: "apiKey"; name: string; in: "header" | "query" | "cookie"; description?: string }
  | { type: "oauth2"; flows: { [flow: string]: unknown }; description?: string }
  | { type: "openIdConnect"; openIdConnectUrl: string; description?: string };

/** What {@link describeMiddleware} attaches. */
export interface MiddlewareDescription {
  /** Statuses the middleware may answer itself (a 304, a 409, a 429…), by status code. */
  responses?: Readonly<Record<number, DescribedResponse | undefined>>;
  /**
   * Headers it adds to the operation's own success (2xx) responses (`ETag`, `Idempotent-Replayed`, `RateLimit`), or
   * to those of its answers a header's `statuses` names.
   */
  successHeaders?: Readonly<Record<string, DescribedHeader>>;
  /** Request headers it reads (`Idempotency-Key`, `If-Match`…), as header parameters (optional unless `required`). */
  requestHeaders?: Readonly<Record<string, DescribedHeader>>;
  /** The security schemes it enforces, by name: any one of them lets a request through (OpenAPI `security`). */
  security?: Readonly<Record<string, SecurityScheme>>;
}

// Symbol.for: the ESM and CJS copies of the package agree on the key.
const DESCRIPTION: unique symbol = Symbol.for("rest-webhooks.middleware-description");
type Carrier = { [DESCRIPTION]?: MiddlewareDescription };

/**
 * Attaches what a middleware can answer to it (merged with what it already says), and returns the same function.
 * @param middleware any function; typically `(next) => handler`.
 * @param description its statuses, success headers, request headers and security schemes.
 * @example
 * const auth = describeMiddleware(requireBearer, {
 *   responses: { 401: { description: "No valid bearer token." }, 403: { description: "Not yours." } },
 *   security: { bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT" } },
 * });
 * router.use(auth);
 */
export function describeMiddleware<F extends (...args: never[]) => unknown>(
  middleware: F,
  description: MiddlewareDescription,
): F {
  requiredFunction("describeMiddleware", "the middleware", middleware);
  const current = (middleware as Carrier)[DESCRIPTION] ?? {};
  const merged: MiddlewareDescription = {
    responses: { ...current.responses, ...description.responses },
    successHeaders: { ...current.successHeaders, ...description.successHeaders },
    requestHeaders: { ...current.requestHeaders, ...description.requestHeaders },
    security: { ...current.security, ...description.security },
  };
  Object.defineProperty(middleware, DESCRIPTION, { value: merged, configurable: true });
  return middleware;
}

/** What a middleware says it can answer, or `undefined` for one that says nothing. */
export function middlewareDescription(middleware: unknown): MiddlewareDescription | undefined {
  return typeof middleware === "function" ? (middleware as Carrier)[DESCRIPTION] : undefined;
}
