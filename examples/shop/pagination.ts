import { HttpProblem } from "rest-webhooks/http";

/** An opaque cursor for the position after `seq`. */
export function encodeCursor(seq: number): string {
  return Buffer.from(`o${seq}`).toString("base64url");
}

/** The position a cursor names; a 400 problem when it is not one this server issued. */
export function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, "base64url").toString("latin1");
  const match = /^o(\d{1,15})$/.exec(text);
  if (match === null) {
    throw new HttpProblem({
      status: 400,
      code: "invalid_cursor",
      detail: "The cursor is not one this API issued; use the Link header of the previous page.",
    });
  }
  return Number(match[1]);
}

/** A `Link` field value with a `next` relation (RFC 8288 §3). */
export function nextLink(path: string, query: Readonly<Record<string, string | number | undefined>>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  return `<${path}?${params}>; rel="next"`;
}
