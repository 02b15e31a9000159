import { describeMiddleware } from "../http/described";
import type { Handler, HttpRequest, HttpResponse, ResponseHeaders } from "../http/message";
import { isHttpProblem } from "../http/problem";
import { toWellFormed } from "../http/well-formed";
import { optionalFunction } from "../options/function-option";
import { clientIp } from "./client-ip";
import { policyField, rateLimitHeaders } from "./headers";
import type { RateLimiter } from "./limiter";
import { quotaExceeded } from "./quota-exceeded";

/** Options of {@link rateLimit}. */
export interface RateLimitOptions {
  /** The limiter whose policies every request is checked against. */
  limiter: RateLimiter;
  /**
   * Chooses the quota partition of a request (token subject, API key, client address…); `undefined`
   * leaves the request unlimited and without RateLimit fields.
   * @default the peer address, `clientIp(request)`, and one shared key for requests whose peer is unknown (a Fetch
   *   runtime, a node:http client that reset its connection): pass `clientIp(request, { trustedProxies })` behind
   *   proxies
   */
  key?: (request: HttpRequest) => string | undefined | Promise<string | undefined>;
  /**
   * The clock, in ms since the epoch.
   * @default Date.now
   */
  now?: () => number;
}

/**
 * The peer address; requests whose peer is unknown share one bucket (fails closed). Fetch runtimes know no peer, and
 * node:http no longer knows it once the kernel has seen a client's RST: a client that sent its request and reset the
 * connection got the handler run unlimited, as often as it liked.
 */
const UNIDENTIFIED = "unidentified";
const defaultKey = (request: HttpRequest): string => clientIp(request) ?? UNIDENTIFIED;

// RFC 9651 §3.1: a List may be split over several field lines, so an inner limiter's items are kept.
function mergeFields(headers: ResponseHeaders, fields: Record<string, string>): ResponseHeaders {
  const merged: ResponseHeaders = { ...headers };
  for (const [name, value] of Object.entries(fields)) {
    const existing = merged[name];
    if (existing === undefined || name === "retry-after") merged[name] = value;
    else merged[name] = `${typeof existing === "string" ? existing : existing.join(", ")}, ${value}`;
  }
  return merged;
}

/**
 * Wraps a handler so that every response carries `RateLimit-Policy` and `RateLimit`, and a request over
 * any policy gets a 429 quota-exceeded problem with `Retry-After` without reaching the handler.
 * @param options the limiter, how to key a request (`undefined` leaves it unlimited), and the clock.
 * @returns a function that wraps a {@link Handler}; it works under both adapters.
 * @example
 * const limited = rateLimit({ limiter, key: (request) => request.headers["x-api-key"] });
 * createServer(limited(handler)).listen(3000);
 */
export function rateLimit(options: RateLimitOptions): (handler: Handler) => Handler {
  const limiter = options?.limiter;
  if (typeof limiter?.check !== "function" || !Array.isArray(limiter.policies)) {
    throw new TypeError(
      "rateLimit: options.limiter must be a RateLimiter: rateLimit({ limiter: createRateLimiter({ policies: [gcraLimit(…)] }) })",
    );
  }
  optionalFunction(
    "rateLimit",
    "options.key",
    options.key,
    "a function of the request (or left out for the client address)",
  );
  optionalFunction("rateLimit", "options.now", options.now, "a function returning ms since the epoch");
  const key = options.key ?? defaultKey;
  const now = options.now ?? Date.now;
  // Draft §3: the policy field "SHOULD remain consistent over a sequence of HTTP responses".
  const policyValue = policyField(limiter.policies);
  const middleware =
    (handler: Handler): Handler =>
    async (request) => {
      const partition = await key(request);
      if (partition === undefined) return handler(request);
      // A key taken from the request (a body field, a token claim) may hold a lone surrogate, which the stores refuse:
      // such a client is limited under the key's well-formed form rather than answered with a 500.
      const decision = await limiter.check(toWellFormed(partition), now());
      if (!decision.allowed) return quotaExceeded(decision, policyValue).toResponse();
      const fields = rateLimitHeaders(decision, policyValue);
      let response: HttpResponse;
      try {
        response = await handler(request);
      } catch (error) {
        // Draft §6: the fields may go on any response, errors included.
        if (!isHttpProblem(error)) throw error;
        response = error.toResponse();
      }
      return { ...response, headers: mergeFields(response.headers, fields) };
    };
  // draft-ietf-httpapi-ratelimit-headers §3, §4; RFC 6585 §4.
  const fieldHeaders = {
    "RateLimit-Policy": { description: "The quota policies that apply (draft-ietf-httpapi-ratelimit-headers §3)." },
    RateLimit: { description: "What is left of the quota, and when it resets (§4)." },
  };
  return describeMiddleware(middleware, {
    responses: {
      429: {
        description: "Over a rate-limit quota: retry after Retry-After.",
        headers: { ...fieldHeaders, "Retry-After": { description: "Seconds to wait.", schema: { type: "integer" } } },
      },
    },
    successHeaders: fieldHeaders,
  });
}
