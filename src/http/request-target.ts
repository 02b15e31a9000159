/** An absolute-form request-target or URL, split as a server reads it (RFC 9112 §3.2.2). */
export interface AbsoluteTarget {
  /**
   * The host (and port) as a Host header carries it: the authority without a userinfo (RFC 9110 §4.2.4: deprecated,
   * and never part of Host); `undefined` when the authority is empty.
   */
  readonly host: string | undefined;
  /** The path and query in origin-form, without the fragment; "/" when there is no path (RFC 9112 §3.2.1). */
  readonly originForm: string;
}

/**
 * Splits an absolute-form request-target (which a server MUST accept, RFC 9112 §3.2.2) into its host and its
 * origin-form: the path a Fetch `Request` URL gives, so both adapters route such a request alike.
 * @returns `undefined` when `url` has no "scheme://".
 */
export function splitAbsoluteTarget(url: string): AbsoluteTarget | undefined {
  const scheme = url.indexOf("://");
  if (scheme === -1) return undefined;
  const start = scheme + 3;
  const hash = url.indexOf("#", start);
  const end = hash === -1 ? url.length : hash;
  const q = url.indexOf("?", start);
  const query = q === -1 || q > end ? end : q;
  // The authority ends at the first "/", "?" or "#" (RFC 3986 §3.2).
  const slash = url.indexOf("/", start);
  const path = slash === -1 || slash > query ? query : slash;
  const authority = url.slice(start, path);
  const host = authority.slice(authority.lastIndexOf("@") + 1);
  return {
    host: host === "" ? undefined : host,
    originForm: `${path === query ? "/" : url.slice(path, query)}${url.slice(query, end)}`,
  };
}
