/**
 * Tokens, RFC 9110 §5.6.2:
 *   token = 1*tchar
 *   tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA
 */

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Whether `value` is an RFC 9110 §5.6.2 token (a method, a header field name, a parameter name).
 * @example isToken("gzip") // true;  isToken("a b") // false
 */
export function isToken(value: string): boolean {
  return TOKEN.test(value);
}
