/**
 * Quoted strings, RFC 9110 §5.6.4:
 *   quoted-string = DQUOTE *( qdtext / quoted-pair ) DQUOTE
 *   qdtext        = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text
 *   quoted-pair   = "\" ( HTAB / SP / VCHAR / obs-text )
 *   obs-text      = %x80-FF
 */
import { isToken } from "./token";

// HTAB / SP / VCHAR / obs-text: every octet but the other CTLs and DEL.
const isText = (c: number) => c === 0x09 || (c >= 0x20 && c <= 0xff && c !== 0x7f);

/**
 * Reads the quoted-string that starts at `input[start]` (which must be DQUOTE).
 * @returns the unescaped value and the index just past the closing DQUOTE, or `undefined` when
 * it is not a well-formed quoted-string.
 */
export function readQuotedString(input: string, start: number): { value: string; end: number } | undefined {
  if (input.charCodeAt(start) !== 0x22) return undefined;
  let value = "";
  let from = start + 1;
  for (let i = from; i < input.length; i++) {
    const c = input.charCodeAt(i);
    if (c === 0x22) return { value: value + input.slice(from, i), end: i + 1 };
    if (c === 0x5c) {
      // quoted-pair: the backslash is dropped, the next octet kept (§5.6.4).
      if (!isText(input.charCodeAt(i + 1))) return undefined;
      value += input.slice(from, i);
      from = ++i;
    } else if (!isText(c)) {
      return undefined;
    }
  }
  return undefined;
}

/**
 * Parses a value that is exactly one quoted-string (RFC 9110 §5.6.4), unescaping quoted-pairs.
 * @returns `undefined` when `input` is not one well-formed quoted-string.
 * @example parseQuotedString('"a \\"b\\""') // 'a "b"'
 */
export function parseQuotedString(input: string): string | undefined {
  const read = readQuotedString(input, 0);
  return read !== undefined && read.end === input.length ? read.value : undefined;
}

/**
 * Formats `value` as a quoted-string, escaping only DQUOTE and "\" (RFC 9110 §5.6.4: a sender
 * should not escape other octets).
 * @throws TypeError when `value` holds a control character other than HTAB, or a character above U+00FF.
 * @example formatQuotedString('say "hi"') // '"say \\"hi\\""'
 */
export function formatQuotedString(value: string): string {
  for (let i = 0; i < value.length; i++) {
    if (!isText(value.charCodeAt(i))) {
      throw new TypeError(
        `Cannot put character U+${value.charCodeAt(i).toString(16).padStart(4, "0")} in a quoted-string`,
      );
    }
  }
  return `"${value.replace(/["\\]/g, "\\$&")}"`;
}

/**
 * Formats a parameter value as a token when it is one, else as a quoted-string (RFC 9110 §5.6.6).
 * @throws TypeError as {@link formatQuotedString}.
 */
export function formatTokenOrQuotedString(value: string): string {
  return isToken(value) ? value : formatQuotedString(value);
}
