/**
 * How many bytes `text` takes in UTF-8 (RFC 3629 §3), as `TextEncoder` would write it, without writing it: a lone
 * surrogate counts as the 3 bytes of the U+FFFD it is encoded as. Plain code, so it runs on every runtime the package
 * supports, `Buffer` or not.
 */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) continue;
    if (unit < 0x800) {
      bytes += 1;
    } else if ((unit & 0xfc00) === 0xd800 && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      // A surrogate pair: one code point above U+FFFF, 4 bytes for its 2 units.
      bytes += 2;
      i++;
    } else {
      bytes += 2;
    }
  }
  return bytes;
}
