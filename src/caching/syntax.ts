/**
 * Character classes of RFC 9110 §5.6 shared by the parsers here, as lookup tables so the hot
 * paths test a character with one array read.
 */

// tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA
const TCHAR = new Uint8Array(128);
for (let c = 0x30; c <= 0x39; c++) TCHAR[c] = 1;
for (let c = 0x41; c <= 0x5a; c++) TCHAR[c] = 1;
for (let c = 0x61; c <= 0x7a; c++) TCHAR[c] = 1;
for (const ch of "!#$%&'*+-.^_`|~") TCHAR[ch.charCodeAt(0)] = 1;

/** Whether the UTF-16 code unit `c` is a tchar (§5.6.2). */
export function isTchar(c: number): boolean {
  return c < 128 && TCHAR[c] === 1;
}

/** Whether `value` is a token (§5.6.2: 1*tchar). */
export function isToken(value: string): boolean {
  if (value.length === 0) return false;
  for (let i = 0; i < value.length; i++) if (!isTchar(value.charCodeAt(i))) return false;
  return true;
}

/** etagc = %x21 / %x23-7E / obs-text (§8.8.3); obs-text is %x80-FF. */
export function isEtagc(c: number): boolean {
  return c === 0x21 || (c >= 0x23 && c <= 0x7e) || (c >= 0x80 && c <= 0xff);
}

// OWS (§5.6.3), shared with the rest of the package's header parsers.
export { isOws, trimOws } from "../http/ows";

/** qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text (§5.6.4). */
export function isQdtext(c: number): boolean {
  return (
    c === 0x09 ||
    c === 0x20 ||
    c === 0x21 ||
    (c >= 0x23 && c <= 0x5b) ||
    (c >= 0x5d && c <= 0x7e) ||
    (c >= 0x80 && c <= 0xff)
  );
}

/** The characters a quoted-pair may escape: HTAB / SP / VCHAR / obs-text (§5.6.4). */
export function isQuotable(c: number): boolean {
  return c === 0x09 || (c >= 0x20 && c <= 0x7e) || (c >= 0x80 && c <= 0xff);
}

/** Index of the next "," at or after `from`, or `value.length`: where a malformed list member ends. */
export function nextComma(value: string, from: number): number {
  const comma = value.indexOf(",", from);
  return comma === -1 ? value.length : comma;
}
