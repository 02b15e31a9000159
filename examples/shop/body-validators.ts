import { conditional, etagFromBody, formatLastModified } from "rest-webhooks/caching";
import type { Handler, HttpRequest } from "rest-webhooks/http";

/** Options of {@link revalidated}. */
export interface RevalidatedOptions {
  /** The clock, epoch ms. */
  now: () => number;
  /** The Cache-Control of every 200 and 304. */
  cacheControl: string;
  /** How many URLs' first-seen times are remembered (the oldest is forgotten first). @default 1000 */
  capacity?: number;
}

function urlOf(request: HttpRequest): string {
  return request.search === "" ? request.path : `${request.path}?${request.search}`;
}

// Adapters' requests compute some fields lazily (getters): copy them one by one, not with a spread.
function asGet(request: HttpRequest): HttpRequest {
  const { path, search, query, headers, body, remoteAddress, signal } = request;
  return { method: "GET", path, search, query, headers, body, remoteAddress, signal };
}

/**
 * Makes reads whose data carries no version conditional: a strong ETag of the body bytes (RFC 9110 §8.8.3),
 * Last-Modified the time this process first served those bytes at that URL (§8.8.2: the origin's best
 * estimate; never later than the real change was seen), Cache-Control, and 304 for matching validators through
 * the caching module's `conditional()`. HEAD is answered as GET, so its headers are GET's (§9.3.2).
 * @example router.route("GET", "/v1/webhook_endpoints", {}, ({ request }) => reads(request));
 */
export function revalidated(handler: Handler, options: RevalidatedOptions): Handler {
  const capacity = options.capacity ?? 1000;
  const firstSeen = new Map<string, { etag: string; at: number }>();
  const annotate: Handler = async (request) => {
    const response = await handler(request.method === "HEAD" ? asGet(request) : request);
    if (response.status !== 200 || response.body == null) return response;
    const etag = etagFromBody(response.body);
    const url = urlOf(request);
    const now = options.now();
    let seen = firstSeen.get(url);
    if (seen?.etag !== etag) {
      seen = { etag, at: now };
      firstSeen.delete(url);
      firstSeen.set(url, seen);
      if (firstSeen.size > capacity) firstSeen.delete(firstSeen.keys().next().value as string);
    }
    const headers = {
      ...response.headers,
      etag,
      "last-modified": formatLastModified(seen.at, now),
      "cache-control": options.cacheControl,
    };
    return { ...response, headers };
  };
  return conditional(annotate, { now: options.now });
}
