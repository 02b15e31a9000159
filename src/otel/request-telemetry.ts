import { context, trace } from "@opentelemetry/api";
import type { Handler, HttpRequest, HttpResponse } from "../http/message";
import { type IdempotencyOptions, idempotency } from "../idempotency/middleware";
import type { BeginResult, IdempotencyStore } from "../idempotency/store";
import type { RateLimitDecision, RateLimiter } from "../ratelimit/limiter";
import { ATTRIBUTES as A, METRIC_NAMES } from "./names";
import { type TelemetryOptions, telemetryOf } from "./telemetry";

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
 * (422), `invalid` or `missing` (400). The decision is read from what the store's `begin` found and the status
 * answered, so the middleware's behaviour is unchanged.
 *
 * @param options the options of `idempotency`.
 * @param telemetry the meter. @default the global one
 * @returns the middleware, with its OpenAPI description.
 * @see docs/observability.md
 * @example router.use(tracedIdempotency({ store, identify: (request) => request.headers["x-account"] ?? "anonymous" }));
 */
export function tracedIdempotency(options: IdempotencyOptions, telemetry: TelemetryOptions = {}): Middleware {
  const option = options?.store;
  if (typeof option !== "function" && typeof option?.begin !== "function") {
    // The middleware names the option; let it say so.
    return idempotency(options);
  }
  const { meter } = telemetryOf(telemetry, "tracedIdempotency");
  const decisions = meter.createCounter(METRIC_NAMES.idempotencyDecisions, {
    description: "Idempotency-Key decisions, by idempotency.decision.",
    unit: "{request}",
  });
  const storeOf = typeof option === "function" ? option : () => option;
  const found = new WeakMap<HttpRequest, BeginResult["kind"]>();
  const observed = (store: IdempotencyStore, request: HttpRequest): IdempotencyStore => ({
    async begin(key, fingerprint, leaseMs) {
      const result = await store.begin(key, fingerprint, leaseMs);
      found.set(request, result.kind);
      return result;
    },
    complete: (key, token, response, ttlMs) => store.complete(key, token, response, ttlMs),
    release: (key, token) => store.release(key, token),
  });
  const middleware = idempotency({ ...options, store: (request) => observed(storeOf(request), request) });
  const traced: Middleware = (handler) => {
    const inner = middleware(handler);
    return async (request) => {
      const span = trace.getSpan(context.active());
      const response = await inner(request);
      const kind = found.get(request);
      let decision: IdempotencyDecisionName | undefined;
      if (kind !== undefined) {
        // decide() (src/idempotency/decision.ts): a fingerprint mismatch wins over the other two.
        decision =
          response.status === 422 && kind !== "acquired"
            ? "mismatch"
            : kind === "acquired"
              ? "new"
              : kind === "completed"
                ? "replay"
                : "in_progress";
      } else if (response.status === 400) {
        decision = BY_PROBLEM[(await problemCode(response)) ?? ""];
      }
      if (decision !== undefined) {
        decisions.add(1, { [A.idempotencyDecision]: decision });
        span?.setAttribute(A.idempotencyDecision, decision);
      }
      return response;
    };
  };
  // The OpenAPI description rides on the middleware under a symbol (src/http/described.ts): carry it over.
  for (const symbol of Object.getOwnPropertySymbols(middleware)) {
    (traced as unknown as Record<symbol, unknown>)[symbol] = (middleware as unknown as Record<symbol, unknown>)[symbol];
  }
  return traced;
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
      decisions.add(1, attributes);
      span?.setAttributes(attributes);
      return decision;
    },
  };
}
