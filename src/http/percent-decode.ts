/**
 * Percent-decoding as the `application/x-www-form-urlencoded` parser does it (WHATWG URL §1.3 "percent-decode", §5.1),
 * checked rather than repaired: the parser decodes the bytes as UTF-8 with replacement, so an escape of bytes that are
 * not UTF-8 (`%E9`, a Latin-1 "é") silently becomes U+FFFD and the bytes the client sent are lost.
 */

// WHATWG URL §1.3: a "%" not followed by two hex digits is kept as written, so it is escaped before decoding.
const LONE_PERCENT = /%(?![0-9A-Fa-f]{2})/g;

/**
 * Whether the percent-escapes of `raw` (well-formed text, as a UTF-8 decoded body is) decode to UTF-8 (RFC 3629 §3):
 * `%C3%A9` does, `%E9` and `%C0%AF` do not. A "%" not followed by two hex digits is no fault. `decodeURIComponent`
 * refuses exactly the escapes that are not UTF-8 (ECMA-262 §19.2.6.5 Decode), as the query check relies on too.
 */
export function percentDecodesToUtf8(raw: string): boolean {
  if (!raw.includes("%")) return true;
  try {
    decodeURIComponent(raw.replace(LONE_PERCENT, "%25"));
    return true;
  } catch {
    return false;
  }
}
