import { HttpProblem, type HttpProblemCode } from "./problem";

function malformed(name: string, why: string): HttpProblem<HttpProblemCode> {
  return new HttpProblem({
    status: 400,
    code: "malformed_query",
    detail: `Query parameter "${name}" ${why}.`,
    extensions: { parameter: name },
  });
}

// The name as the client will recognise it: decoded when it can be, else as sent.
function displayName(raw: string): string {
  try {
    return decodeURIComponent(raw.replaceAll("+", " "));
  } catch {
    return raw;
  }
}

/**
 * Checks that every name and value of a query string decodes to text a store can keep: percent-encoded UTF-8
 * (RFC 3986 §2.1, WHATWG URL §5.1; a parser would silently turn other bytes into U+FFFD) without U+0000.
 * @param search the raw query string, without the leading `?`.
 * @returns the 400 `malformed_query` problem naming the parameter, or `undefined` when the query is fine.
 * @example queryProblem("starting_after=%00") // 400 malformed_query, parameter "starting_after"
 */
export function queryProblem(search: string): HttpProblem<HttpProblemCode> | undefined {
  // Only a percent-encoding can carry a NUL or a byte that is not UTF-8: targets are ASCII on the wire.
  if (!search.includes("%") && !search.includes("\u0000")) return undefined;
  for (const pair of search.split("&")) {
    const eq = pair.indexOf("=");
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    for (const raw of eq === -1 ? [pair] : [rawName, pair.slice(eq + 1)]) {
      let text: string;
      try {
        text = decodeURIComponent(raw.replaceAll("+", " "));
      } catch {
        return malformed(displayName(rawName), "is not percent-encoded UTF-8");
      }
      if (text.includes("\u0000")) return malformed(displayName(rawName), "decodes to U+0000");
    }
  }
  return undefined;
}
