import { context, trace } from "@opentelemetry/api";
import type { Handler, HttpResponse } from "../http/message";
import { isIdempotent } from "../http/methods";
import { type IdempotencyOptions, idempotency } from "../idempotency/middleware";
import { REPLAYED_HEADER } from "../idempotency/stored-response";
import type { RateLimitDecision, RateLimiter } from "../ratelimit/limiter";
import { ATTRIBUTES as A, METRIC_NAMES } from "./names";
import { quietly, type TelemetryOptions, telemetryOf } from "./telemetry";

/** What the idempotency middleware did with a request (`idempotency.decision`). */
export type IdempotencyDecisionName = "new" | "replay" | "in_progress" | "mismatch" | "invalid" | "missing";

type Middleware = (handler: Handler) => Handler;

// The problem codes of src/idempotency/problems.ts, read from the response the middleware answered with.
const BY_PROBLEM: Readonly<Record<string, IdempotencyDecisionName>> = {
  idempotency_key_invalid: "invalid",
  idempotency_key_missing: "missing",
};

async function problemCode(response: HttpResponse): Promise<string | undefined> {
  const body = response.body;
  if (body === undefined || body === null) return undefined;
  try {
    const parsed: unknown = JSON.parse(typeof body === "string" ? body : new TextDecoder().decode(body));
    return typeof parsed === "object" && parsed !== null && "code" in parsed && typeof parsed.code === "string"
      ? parsed.code
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The idempotency middleware (`idempotency(options)` of `rest-webhooks/idempotency`), observed: its decision on each
 * request carrying an `Idempotency-Key` is set as `idempotency.decision` on the active span (your HTTP server span)
 * and counted: `new` (the handler ran under the key), `replay` (the stored response), `in_progress` (409), `mismatch`
 * (422), `invalid` or `missing` (400). The decision is read from whether the handler ran and what the middleware
 * answered, so the middleware's behaviour is unchanged.
 *
 * @param options the options of `idempotency`.
 * @param telemetry the meter. @default the global one
 * @returns the middleware, with its OpenAPI description.
 * @see docs/observability.md
 * @example router.use(tracedIdempotency({ store, identify: (request) => request.headers.authorization ?? "anonymous" }));
 */
export function tracedIdempotency(options: IdempotencyOptions, telemetry: TelemetryOptions = {}): Middleware {
  // The middleware checks its own options (and names them); made first so misuse throws before anything else.
  const middleware = idempotency(options);
  const { meter } = telemetryOf(telemetry, "tracedIdempotency");
  const decisions = meter.createCounter(METRIC_NAMES.idempotencyDecisions, {
    description: "Idempotency-Key decisions, by idempotency.decision.",
    unit: "{request}",
  });
  const protects = protectedMethods(options.methods);
  const mayRequire = options.required !== undefined && options.required !== false;
  const traced: Middleware = (handler) => {
    const plain = middleware(handler);
    return (request) => {
      const keyed = request.headers["idempotency-key"] !== undefined && protects(request.method);
      // A request the middleware does not protect, without a key it could require: nothing to decide, no cost.
      if (!keyed && !mayRequire) return plain(request);
      const span = trace.getSpan(context.active());
      // The handler runs under the key only for a new one: a flag of this request's own says so.
      let ran = false;
      const inner = middleware((forwarded) => {
        ran = true;
        return handler(forwarded);
      });
      return Promise.resolve(inner(request)).then(async (response) => {
        const decision = keyed ? keyedDecision(ran, response) : await missing(response);
        if (decision !== undefined) {
          // The handler may have run: a failing meter or span must not turn its answer into an error.
          quietly(() => decisions.add(1, { [A.idempotencyDecision]: decision }));
          quietly(() => span?.setAttribute(A.idempotencyDecision, decision));
        }
        return response;
      });
    };
  };
  // The OpenAPI description rides on the middleware under a symbol (src/http/described.ts): carry it over.
  for (const symbol of Object.getOwnPropertySymbols(middleware)) {
    (traced as unknown as Record<symbol, unknown>)[symbol] = (middleware as unknown as Record<symbol, unknown>)[symbol];
  }
  return traced;
}

/** The decision on a protected request with a key, read from the answer (src/idempotency/middleware.ts `keyed`). */
function keyedDecision(ran: boolean, response: HttpResponse): IdempotencyDecisionName | undefined {
  if (ran) return "new";
  if (response.headers[REPLAYED_HEADER] === "true") return "replay";
  switch (response.status) {
    case 409:
      return "in_progress";
    case 422:
      return "mismatch";
    case 400:
      return "invalid";
    default:
      return undefined;
  }
}

async function missing(response: HttpResponse): Promise<IdempotencyDecisionName | undefined> {
  return response.status === 400 ? BY_PROBLEM[(await problemCode(response)) ?? ""] : undefined;
}

// The same rule as the middleware's `methods` option (RFC 9110 §9.2.2 by default).
function protectedMethods(option: IdempotencyOptions["methods"]): (method: string) => boolean {
  if (option === undefined) return (method) => !isIdempotent(method);
  if (typeof option === "function") return option;
  const listed = new Set(option.map((m) => m.toUpperCase()));
  return (method) => listed.has(method);
}

/**
 * Wraps a rate limiter so each decision is set as `ratelimit.decision` (`allowed` or `limited`) on the active span and
 * counted. Pass the wrapper to `rateLimit({ limiter })`.
 *
 * @param limiter what `createRateLimiter({...})` returned.
 * @param options the meter. @default the global one
 * @returns a limiter with the same policies and decisions.
 * @see docs/observability.md
 * @example const limited = rateLimit({ limiter: instrumentRateLimiter(limiter), key });
 */
export function instrumentRateLimiter(limiter: RateLimiter, options: TelemetryOptions = {}): RateLimiter {
  if (typeof limiter?.check !== "function") throw new TypeError("instrumentRateLimiter: limiter must be a RateLimiter");
  const { meter } = telemetryOf(options, "instrumentRateLimiter");
  const decisions = meter.createCounter(METRIC_NAMES.rateLimitDecisions, {
    description: "Rate-limit decisions, by ratelimit.decision.",
    unit: "{request}",
  });
  const allowed = { [A.rateLimitDecision]: "allowed" };
  const limited = { [A.rateLimitDecision]: "limited" };
  return {
    policies: limiter.policies,
    set: limiter.set,
    async check(key, nowMs): Promise<RateLimitDecision> {
      const span = trace.getSpan(context.active());
      const decision = await limiter.check(key, nowMs);
      const attributes = decision.allowed ? allowed : limited;
      // The request was counted against the quota: telemetry must not fail it on top.
      quietly(() => decisions.add(1, attributes));
      quietly(() => span?.setAttributes(attributes));
      return decision;
    },
  };
}
