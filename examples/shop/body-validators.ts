import { conditional, etagFromBody, settledLastModified } from "rest-webhooks/caching";
import {
  describeMiddleware,
  type Handler,
  type HttpRequest,
  type ResponseHeaders,
  withMethod,
} from "rest-webhooks/http";
import type { Middleware } from "rest-webhooks/routing";

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

/**
 * Makes reads whose data carries no version conditional: a strong ETag of the body bytes (RFC 9110 §8.8.3), or the
 * one the handler set (the endpoint API tags its endpoint itself, and checks writes against that tag: the two must
 * agree), Last-Modified the time this process first served those bytes at that URL (§8.8.2: the origin's best
 * estimate; never later than the real change was seen), once that second is over, Cache-Control, and 304 for matching
 * validators through the caching module's `conditional()`. A 304 the handler answers itself gets the Cache-Control
 * too (§15.4.5). HEAD is answered as GET, so its headers are GET's (§9.3.2). Other methods pass through untouched.
 * @example declareEndpointApi(router, { …, use: [revalidated({ now, cacheControl: "private, no-cache" })] })
 */
export function revalidated(options: RevalidatedOptions): Middleware {
  const middleware: Middleware = (handler) => {
    const reads = revalidatedReads(handler, options);
    return (request) => (request.method === "GET" || request.method === "HEAD" ? reads(request) : handler(request));
  };
  // Reads only: 304 for a current copy, 412 for a failed If-Match or If-Unmodified-Since on a read.
  const reads = ["GET", "HEAD"];
  const cacheControl = { description: `\`${options.cacheControl}\`.`, methods: reads };
  return describeMiddleware(middleware, {
    responses: {
      304: {
        description: "Not Modified: the client's copy is current.",
        problem: false,
        methods: reads,
        headers: { "Cache-Control": cacheControl },
      },
      412: { description: "A precondition failed.", methods: reads },
    },
    successHeaders: {
      ETag: { description: "A strong tag of the body.", methods: reads },
      "Last-Modified": { description: "When this body was first served.", methods: reads },
      "Cache-Control": cacheControl,
    },
  });
}

function revalidatedReads(handler: Handler, options: RevalidatedOptions): Handler {
  const capacity = options.capacity ?? 1000;
  const firstSeen = new Map<string, { etag: string; at: number }>();
  const annotate: Handler = async (request) => {
    const response = await handler(request.method === "HEAD" ? withMethod(request, "GET") : request);
    // RFC 9110 §15.4.5: a 304 carries the Cache-Control the 200 would have.
    if (response.status === 304)
      return { ...response, headers: { ...response.headers, "cache-control": options.cacheControl } };
    if (response.status !== 200 || response.body == null) return response;
    // The handler's own tag when it set one (the library's handlers name fields in lower case).
    const own = response.headers.etag;
    const etag = typeof own === "string" ? own : etagFromBody(response.body);
    const url = urlOf(request);
    const now = options.now();
    let seen = firstSeen.get(url);
    if (seen?.etag !== etag) {
      seen = { etag, at: now };
      firstSeen.delete(url);
      firstSeen.set(url, seen);
      if (firstSeen.size > capacity) firstSeen.delete(firstSeen.keys().next().value as string);
    }
    const headers: ResponseHeaders = { ...response.headers, etag, "cache-control": options.cacheControl };
    // Once the second these bytes were first seen is over: a date sent within it would hide a change made in it.
    const lastModified = settledLastModified(seen.at, now);
    if (lastModified !== undefined) headers["last-modified"] = lastModified;
    return { ...response, headers };
  };
  return conditional({ now: options.now })(annotate);
}
