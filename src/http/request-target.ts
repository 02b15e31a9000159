/**
 * The path and query of an absolute-form request-target or URL (RFC 9112 §3.2.2, which a server MUST accept), in
 * origin-form: without its "scheme://authority" and fragment, "/" when it has no path (RFC 9112 §3.2.1). The path a
 * Fetch `Request` URL gives, so both adapters route such a request alike.
 * @returns `undefined` when `url` has no "scheme://".
 */
export function originFormOf(url: string): string | undefined {
  const scheme = url.indexOf("://");
  if (scheme === -1) return undefined;
  const slash = url.indexOf("/", scheme + 3);
  const q = url.indexOf("?", scheme + 3);
  const hash = url.indexOf("#", scheme + 3);
  const end = hash === -1 ? url.length : hash;
  if (slash === -1 || (q !== -1 && q < slash) || (hash !== -1 && hash < slash)) {
    return q === -1 || q > end ? "/" : `/${url.slice(q, end)}`;
  }
  return url.slice(slash, end);
}

/**
 * The host (and port) of an absolute-form request-target, as a Host header carries it: the authority without a
 * userinfo (RFC 9110 §4.2.4: deprecated, and never part of Host); `undefined` when `url` has no "scheme://" or the
 * authority is empty.
 */
export function hostOf(url: string): string | undefined {
  const scheme = url.indexOf("://");
  if (scheme === -1) return undefined;
  let end = url.length;
  for (const delimiter of ["/", "?", "#"]) {
    const at = url.indexOf(delimiter, scheme + 3);
    if (at !== -1 && at < end) end = at;
  }
  const authority = url.slice(scheme + 3, end);
  const host = authority.slice(authority.lastIndexOf("@") + 1);
  return host === "" ? undefined : host;
}
