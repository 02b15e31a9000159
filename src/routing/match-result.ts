/** Why a path was refused with a 400 before any handler ran. */
export type BadPathCode = "malformed_path" | "param_too_long";

/**
 * The answer of {@link Matcher.match}: a route and its decoded parameters, or why there is none.
 * - `found`: the most specific route declared for this method and path.
 * - `method_not_allowed`: some route matches the path, none for this method (RFC 9110 §15.5.6);
 *   `allow` lists the methods that would match, HEAD (with GET) and OPTIONS included.
 * - `not_found`: no route matches the path.
 * - `redirect`: only the normalized path matches and the policy says redirect; `location` is that path, never one
 *   that starts with "//" or "/\" (another host to a client, RFC 3986 §4.2): such a path is `not_found`.
 *   OPTIONS is never redirected: it gets the normalized path's result (a CORS preflight fails on a redirect).
 * - `bad_path`: the route matched but a parameter is malformed percent-encoding (not UTF-8, or a NUL) or too long.
 */
export type MatchResult<R> =
  | { readonly kind: "found"; readonly route: R; readonly params: Readonly<Record<string, string>> }
  | { readonly kind: "method_not_allowed"; readonly allow: readonly string[] }
  | { readonly kind: "not_found" }
  | { readonly kind: "redirect"; readonly location: string }
  | { readonly kind: "bad_path"; readonly code: BadPathCode; readonly param: string };

/** What to do with a request path that only matches after normalization. */
export type PathPolicy = "strict" | "ignore" | "redirect";

/** The matching policy of a router. */
export interface MatchOptions {
  /**
   * A request path ending in "/" (other than "/"): `strict` matches it as sent (so `/users/` is not
   * `/users`), `ignore` matches it without the slash, `redirect` answers 308 to the path without it (OPTIONS,
   * which a CORS preflight cannot follow through a redirect, is answered as for that path instead).
   * @default "strict"
   */
  trailingSlash?: PathPolicy;
  /**
   * Empty segments (`/users//u_1`): `strict` matches them as sent (they match no parameter),
   * `ignore` matches as if the slashes were one, `redirect` answers 308 to the merged path (OPTIONS: as for it).
   * @default "strict"
   */
  duplicateSlashes?: PathPolicy;
  /**
   * Whether literal segments compare case-sensitively (RFC 3986 §6.2.2.1: paths are case-sensitive).
   * Parameter values always keep their case.
   * @default true
   */
  caseSensitive?: boolean;
  /**
   * Longest decoded path parameter, in UTF-16 code units; longer gets a 400 `param_too_long`.
   * Wildcard parameters are not limited.
   * @default 100
   */
  maxParamLength?: number;
}

/** The one `not_found` answer: matching a miss allocates nothing. */
export const NOT_FOUND: MatchResult<never> = Object.freeze({ kind: "not_found" });
