/**
 * Dot-segment removal for a request path, as a Fetch runtime's URL parser does it, so the node adapter hands a
 * handler the same `path` the Fetch adapter does for the same request target.
 */

// WHATWG URL "single-dot URL path segment": "." or "%2e", ASCII case-insensitive.
const isSingleDot = (segment: string) => segment === "." || segment.toLowerCase() === "%2e";

// WHATWG URL "double-dot URL path segment": "..", ".%2e", "%2e." or "%2e%2e", ASCII case-insensitive.
function isDoubleDot(segment: string): boolean {
  if (segment === "..") return true;
  const lower = segment.toLowerCase();
  return lower === ".%2e" || lower === "%2e." || lower === "%2e%2e";
}

/** Whether `segment` is one a URL parser removes: ".", "..", or either with dots spelled `%2e` (any case). */
export function isDotSegment(segment: string): boolean {
  return isSingleDot(segment) || isDoubleDot(segment);
}

// Whether some segment of `path` is a dot-segment, found without splitting: a path with "%20" or "/.well-known" in it
// passes the quick check in removeDotSegments and would otherwise pay for an array per request.
function hasDotSegment(path: string): boolean {
  let start = 1;
  while (start <= path.length) {
    const slash = path.indexOf("/", start);
    const end = slash === -1 ? path.length : slash;
    const first = path.charCodeAt(start);
    // A dot-segment is 1 to 6 characters and starts with "." or "%".
    if ((first === 0x2e || first === 0x25) && end - start <= 6) {
      const segment = path.slice(start, end);
      if (isDotSegment(segment)) return true;
    }
    start = end + 1;
  }
  return false;
}

/**
 * `path` without its dot-segments (RFC 3986 §5.2.4), read the way the WHATWG URL parser's path state reads them: a
 * percent-encoded dot (`%2e`, `%2E`) counts as a dot, `..` never climbs above the root, and a trailing `.` or `..`
 * leaves a trailing slash. Nothing else changes: no percent-decoding, no other encoding, and `%2F` stays inside its
 * segment. A path that does not start with "/" (asterisk-form `*`) is returned as it is.
 * @param path an origin-form path, without query or fragment.
 * @example removeDotSegments("/files/../../etc/passwd") // "/etc/passwd"
 * @example removeDotSegments("/items/%2E%2E") // "/"
 * @see https://url.spec.whatwg.org/#path-state
 */
export function removeDotSegments(path: string): string {
  // bench/adapters: the node adapter calls this per request; an ordinary path has no segment that starts with a dot
  // or a percent-encoded one, and costs these two searches.
  if (path.indexOf("/.") === -1 && path.indexOf("%2") === -1) return path;
  if (path.charCodeAt(0) !== 0x2f /* / */ || !hasDotSegment(path)) return path;
  const segments = path.split("/");
  const kept: string[] = [];
  const last = segments.length - 1;
  // segments[0] is the empty string before the leading "/".
  for (let i = 1; i <= last; i++) {
    const segment = segments[i] as string;
    if (isDoubleDot(segment)) {
      // "..": up one segment (never above the root).
      kept.pop();
      if (i === last) kept.push("");
    } else if (isSingleDot(segment)) {
      if (i === last) kept.push("");
    } else {
      kept.push(segment);
    }
  }
  return `/${kept.join("/")}`;
}
