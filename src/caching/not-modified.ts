import type { ResponseHeaders } from "../http/message";
import { readHeader } from "./response-headers";

// Representation metadata (RFC 9110 §8.3-§8.8, RFC 9530 digests, RFC 6266 Content-Disposition), the 200's range
// support (§14.3) and framing (Transfer-Encoding, and Trailer: §6.6.2, no content means no trailer section) that
// describe a body a 304 does not have.
const BODY_METADATA = new Set([
  "content-type",
  "content-encoding",
  "content-language",
  "content-length",
  "content-range",
  "content-disposition",
  "content-digest",
  "repr-digest",
  "digest",
  "content-md5",
  "accept-ranges",
  "transfer-encoding",
  "trailer",
]);

/**
 * The header fields of a 304 built from those the 200 response would have carried (RFC 9110 §15.4.5):
 * ETag, Content-Location, Date, Vary, Cache-Control and Expires are kept, as is every field that is not
 * representation metadata (Set-Cookie, CORS fields, …); fields about the 200's body (Content-Type, Content-Length,
 * Accept-Ranges, Trailer, …) are dropped, and so is Last-Modified when an ETag is present.
 * @example notModifiedHeaders({ etag: '"a"', "content-type": "text/plain", vary: "accept" }) // { etag: '"a"', vary: "accept" }
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.4.5
 */
export function notModifiedHeaders(headers: ResponseHeaders): ResponseHeaders {
  const result: ResponseHeaders = {};
  const hasEtag = readHeader(headers, "etag") !== undefined;
  for (const name in headers) {
    const lower = name.toLowerCase();
    if (BODY_METADATA.has(lower)) continue;
    // §15.4.5: Last-Modified "might be useful if the response does not have an ETag field".
    if (lower === "last-modified" && hasEtag) continue;
    const value = headers[name];
    if (value !== undefined) result[name] = value;
  }
  return result;
}
