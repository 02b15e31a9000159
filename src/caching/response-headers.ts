import type { ResponseHeaders } from "../http/message";

/**
 * Reads a response header field case-insensitively (handlers may write `ETag` or `etag`); repeated
 * values are joined as a list (RFC 9110 §5.3).
 */
export function readHeader(
  headers: ResponseHeaders | Readonly<Record<string, unknown>>,
  name: string,
): string | undefined {
  let value = headers[name];
  if (value === undefined) {
    for (const key in headers) {
      if (key.length === name.length && key.toLowerCase() === name) {
        value = headers[key];
        break;
      }
    }
  }
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  return Array.isArray(value) ? value.join(", ") : String(value);
}
