import { isOws } from "./ows";

/**
 * Comma-separated list fields, RFC 9110 §5.6.1:
 *   #element => [ element ] *( OWS "," OWS [ element ] )
 * A recipient must accept and ignore empty elements (§5.6.1.2); commas inside a quoted-string
 * (§5.6.4) do not separate elements.
 */

// Index of the DQUOTE closing the quoted-string opened at `open`, honouring quoted-pairs (§5.6.4); -1 when none.
function closingQuote(value: string, open: number): number {
  for (let i = open + 1; i < value.length; i++) {
    const q = value.charCodeAt(i);
    if (q === 0x5c) i++;
    else if (q === 0x22) return i;
  }
  return -1;
}

/**
 * Splits a list field value into its elements, trimmed of OWS, with empty elements dropped (§5.6.1.2).
 * Quoted-strings are kept as written (quotes and escapes included); an unterminated one runs to the end.
 * Never throws. Repeated field lines joined with ", " (RFC 9110 §5.3) split the same way.
 * @example splitHeaderList('a, "b,c" ,, d') // ['a', '"b,c"', 'd']
 */
export function splitHeaderList(value: string): string[] {
  const out: string[] = [];
  const n = value.length;
  let start = 0;
  let i = 0;
  const push = (end: number) => {
    let a = start;
    let b = end;
    while (a < b && isOws(value.charCodeAt(a))) a++;
    while (b > a && isOws(value.charCodeAt(b - 1))) b--;
    if (b > a) out.push(value.slice(a, b));
  };
  while (i < n) {
    const c = value.charCodeAt(i);
    if (c === 0x22) {
      const close = closingQuote(value, i);
      i = close === -1 ? n : close;
    } else if (c === 0x2c) {
      push(i);
      start = i + 1;
    }
    i++;
  }
  push(n);
  return out;
}

// Whether `element` splits back as itself from any place in a list: not empty, no OWS at either end, no comma
// outside a quoted-string, and every quoted-string closed (an open one would swallow the elements after it).
function isListElement(element: string): boolean {
  const n = element.length;
  if (n === 0 || isOws(element.charCodeAt(0)) || isOws(element.charCodeAt(n - 1))) return false;
  for (let i = 0; i < n; i++) {
    const c = element.charCodeAt(i);
    if (c === 0x2c) return false;
    if (c === 0x22) {
      i = closingQuote(element, i);
      if (i === -1) return false;
    }
  }
  return true;
}

/**
 * Joins elements into a list field value with ", " (the form RFC 9110 §5.6.1 recommends).
 * @throws TypeError when an element is empty, has leading or trailing OWS, holds a comma outside a
 * quoted-string, or opens a quoted-string it does not close: it would not split back into the same elements.
 * @example formatHeaderList(["gzip", "br"]) // "gzip, br"
 */
export function formatHeaderList(elements: readonly string[]): string {
  for (const element of elements) {
    if (!isListElement(element)) throw new TypeError(`Not a list element: ${JSON.stringify(element)}`);
  }
  return elements.join(", ");
}
