/**
 * Optional whitespace, RFC 9110 §5.6.3: OWS = *( SP / HTAB ). Not `String.prototype.trim`'s whitespace, which also
 * takes NBSP, VT, U+FEFF and line breaks: a field value ending in one of those is malformed, not a shorter valid one.
 */

/** Whether the character code `c` is SP or HTAB. */
export function isOws(c: number): boolean {
  return c === 0x20 || c === 0x09;
}

/** `value` without leading and trailing OWS. */
export function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isOws(value.charCodeAt(start))) start++;
  while (end > start && isOws(value.charCodeAt(end - 1))) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

/** `value` without trailing OWS (before a `;` or `,` that ends it). */
export function trimOwsEnd(value: string): string {
  let end = value.length;
  while (end > 0 && isOws(value.charCodeAt(end - 1))) end--;
  return end === value.length ? value : value.slice(0, end);
}
