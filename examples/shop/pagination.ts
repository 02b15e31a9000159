import { HttpProblem } from "rest-webhooks/http";

/** An opaque cursor for the position after `seq`. */
export function encodeCursor(seq: number): string {
  return Buffer.from(`o${seq}`).toString("base64url");
}

/** The position a cursor names; a 400 problem when it is not one this server issued. */
export function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, "base64url").toString("latin1");
  const match = /^o(\d{1,15})$/.exec(text);
  // Node's decoder skips unused bits and a trailing partial group, and the digits may carry leading zeros: only the
  // spelling encodeCursor gives is one this server issued (another would name the same page under another URL).
  if (match === null || encodeCursor(Number(match[1])) !== cursor) {
    throw new HttpProblem({
      status: 400,
      code: "invalid_cursor",
      detail: "The cursor is not one this API issued; use the Link header of the previous page.",
    });
  }
  return Number(match[1]);
}

/** One page: at most `limit` items, and the cursor of the next page when there is one. */
export interface Page<T> {
  readonly items: readonly T[];
  readonly next: string | undefined;
}

/**
 * Cuts a page from rows read with a limit of `limit + 1`: a row left over means a next page, which starts
 * after the last item shown (keyset pagination: the cursor is a position in `seq`, not an offset, so rows
 * created or deleted meanwhile move no row that existed throughout across a page boundary).
 */
export function cutPage<T extends { readonly seq: number }>(rows: readonly T[], limit: number): Page<T> {
  if (rows.length <= limit) return { items: rows, next: undefined };
  const items = rows.slice(0, limit);
  return { items, next: encodeCursor((items[limit - 1] as T).seq) };
}

/**
 * A `Link` field value with a `next` relation (RFC 8288 §3). The target is a path-absolute reference, which
 * the client resolves against the request's URL (RFC 8288 §3.1, RFC 3986 §5): the server need not know the
 * scheme and host it is reached by behind a proxy, and never echoes a client-sent Host into a link.
 */
export function nextLink(path: string, query: Readonly<Record<string, string | number | undefined>>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  return `<${path}?${params}>; rel="next"`;
}
