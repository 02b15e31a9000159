/** Every code a {@link RoutingError} can carry. */
export type RoutingErrorCode =
  /** A template does not follow the template grammar (see docs/routing.md). */
  | "invalid_template"
  /** A template contains `?` (query parameters filter lists; they never select a resource). */
  | "query_in_template"
  /** Two declarations have the same method and the same template. */
  | "duplicate_route"
  /**
   * Two declarations have the same method and the same shape, differing only in parameter names; or
   * their first difference is two composite segments that can match the same segment.
   */
  | "ambiguous_route"
  /** Two routes share a name. */
  | "duplicate_name"
  /** A method is not an RFC 9110 §5.6.2 token. */
  | "invalid_method"
  /** An operation's schemas do not fit its template (e.g. a params schema missing a template parameter). */
  | "invalid_schema"
  /** `url()` was called with an unknown route name or missing parameters. */
  | "unknown_route"
  /** A handler broke the rule of its method (e.g. a create answering 200, a DELETE answering 200). */
  | "method_rule_violation"
  /** With `validateResponses`, a handler answered a body its response schema rejects. */
  | "invalid_response"
  /**
   * `openapi()`: two routes of one method would be one OpenAPI operation, their templates differing only in
   * parameter names or in a wildcard (`{path}` and `{path*}`, `{name}` and `*`), which OpenAPI 3.1 §4.8.8.1 cannot tell apart.
   */
  | "openapi_path_conflict";

/**
 * Misuse of the router: bad declarations at build time, or a handler breaking its method's rule.
 * Bad requests never throw this; they get a problem response.
 */
export class RoutingError extends Error {
  readonly code: RoutingErrorCode;

  constructor(code: RoutingErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "RoutingError";
    this.code = code;
  }
}
