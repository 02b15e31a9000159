/**
 * The Link header field, RFC 8288 §3:
 *   Link       = #link-value
 *   link-value = "<" URI-Reference ">" *( OWS ";" OWS link-param )
 *   link-param = token BWS [ "=" BWS ( token / quoted-string ) ]
 * Read as RFC 8288 Appendix B parses it: leniently, a list element that does not start with "<" skipped. Not the
 * shared list splitter (`splitHeaderList`): a URI-Reference may hold commas (`</things?ids=1,2>`) outside any
 * quoted-string.
 */
import { isOws } from "../http/ows";
import { readQuotedString } from "../http/quoted-string";

/** One link: its target as written (a URI reference) and its relation types, lower case. */
export interface LinkValue {
  readonly target: string;
  readonly rel: readonly string[];
}

function skipOws(value: string, i: number): number {
  let at = i;
  while (at < value.length && isOws(value.charCodeAt(at))) at++;
  return at;
}

// Index of the comma that ends the list element holding `i`, or the end: a comma inside a quoted-string separates
// nothing (RFC 9110 §5.6.1, §5.6.4); an unclosed quoted-string runs to the end.
function elementEnd(value: string, i: number): number {
  let at = i;
  while (at < value.length && value[at] !== ",") {
    if (value[at] !== '"') at++;
    else at = readQuotedString(value, at)?.end ?? value.length;
  }
  return at;
}

// The end of an unquoted parameter name or value: before BWS, "=", ";" or "," (RFC 8288 Appendix B.3).
function tokenEnd(value: string, i: number, stops: string): number {
  let at = i;
  while (at < value.length && !stops.includes(value[at] as string)) at++;
  return at;
}

/**
 * The links of a Link field value; repeated field lines joined with ", " (as `Headers.get` joins them, RFC 9110
 * §5.3) read as one list. Parameter names and relation types compare case-insensitively (RFC 8288 §3, §2.1.1);
 * `rel` is a space-separated list, and a second `rel` is ignored (§3.3).
 * @example parseLinkHeader('</p2>; title="a, b"; rel="prev NEXT"') // [{ target: "/p2", rel: ["prev", "next"] }]
 */
export function parseLinkHeader(value: string): LinkValue[] {
  const links: LinkValue[] = [];
  let i = 0;
  while (i < value.length) {
    i = skipOws(value, i);
    if (i >= value.length) break;
    // Empty elements are ignored (RFC 9110 §5.6.1.2), as are elements that are no link (Appendix B.2).
    if (value[i] !== "<") {
      i = elementEnd(value, i) + 1;
      continue;
    }
    const close = value.indexOf(">", i);
    if (close === -1) break;
    const target = value.slice(i + 1, close);
    let rel: string | undefined;
    i = skipOws(value, close + 1);
    while (value[i] === ";") {
      const nameStart = skipOws(value, i + 1);
      const nameEnd = tokenEnd(value, nameStart, " \t=;,");
      const name = value.slice(nameStart, nameEnd).toLowerCase();
      i = skipOws(value, nameEnd);
      let param = "";
      if (value[i] === "=") {
        i = skipOws(value, i + 1);
        if (value[i] === '"') {
          const quoted = readQuotedString(value, i);
          // An unclosed quoted-string swallows the rest of the field: no further link can be read.
          if (quoted === undefined) return links;
          param = quoted.value;
          i = quoted.end;
        } else {
          const end = tokenEnd(value, i, " \t;,");
          param = value.slice(i, end);
          i = end;
        }
      }
      if (name === "rel" && rel === undefined) rel = param;
      i = skipOws(value, i);
    }
    const types = (rel ?? "").split(/[ \t]+/).filter((type) => type.length > 0);
    links.push({ target, rel: types.map((type) => type.toLowerCase()) });
    i = elementEnd(value, i) + 1;
  }
  return links;
}

/**
 * The target of the first link whose relation types include `next` (RFC 8288 §3.3; IANA link relations), if any.
 * @example nextLink('</things?page=2>; rel="next"') // "/things?page=2"
 */
export function nextLink(value: string | null): string | undefined {
  if (value === null) return undefined;
  return parseLinkHeader(value).find((link) => link.rel.includes("next"))?.target;
}
