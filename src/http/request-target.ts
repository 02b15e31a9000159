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
