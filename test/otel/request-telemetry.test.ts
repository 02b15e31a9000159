import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { middlewareDescription } from "../../src/http/described";
import type { Handler, HttpRequest } from "../../src/http/message";
import { MemoryIdempotencyStore } from "../../src/idempotency/index";
import { ATTRIBUTES, instrumentRateLimiter, METRIC_NAMES, tracedIdempotency } from "../../src/otel/index";
import { createRateLimiter, rateLimit } from "../../src/ratelimit/index";
import { otelFixture, throwingTelemetry } from "./otel-fixture";

const otel = otelFixture();
afterAll(() => otel.close());
beforeEach(() => otel.reset());

const post = (key: string | undefined, body = "{}"): HttpRequest => ({
  method: "POST",
  path: "/orders",
  search: "",
  query: {},
  headers: key === undefined ? {} : { "idempotency-key": `"${key}"` },
  body: new TextEncoder().encode(body),
});

/** Runs `handler` inside a span, as an HTTP server instrumentation would, and returns that span's attributes. */
async function inServerSpan(handler: Handler, request: HttpRequest) {
  const response = await otel.tracer.startActiveSpan("POST /orders", async (span) => {
    const answer = await handler(request);
    span.end();
    return answer;
  });
  const span = otel.spans().at(-1);
  return { response, attributes: span?.attributes ?? {} };
}

describe("request telemetry", () => {
  it("sets and counts the idempotency decision: new, replay, in progress, mismatch, invalid, missing", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const protect = tracedIdempotency(
      { store: new MemoryIdempotencyStore(), identify: () => "acct", required: true },
      { tracer: otel.tracer, meter: otel.meter },
    );
    const handler = protect(async (request) => {
      if (request.headers["idempotency-key"] === '"slow"') await held;
      return { status: 201, headers: {}, body: "created" };
    });
    const decisionOf = async (request: HttpRequest) =>
      (await inServerSpan(handler, request)).attributes[ATTRIBUTES.idempotencyDecision];
    expect(await decisionOf(post("k1"))).toBe("new");
    expect(await decisionOf(post("k1"))).toBe("replay");
    expect(await decisionOf(post("k1", '{"other":1}'))).toBe("mismatch");
    const slow = inServerSpan(handler, post("slow"));
    expect(await decisionOf(post("slow"))).toBe("in_progress");
    release();
    await slow;
    expect(await decisionOf(post(undefined))).toBe("missing");
    const invalid = post(undefined);
    expect(await decisionOf({ ...invalid, headers: { "idempotency-key": "not a string" } })).toBe("invalid");

    const counts = Object.fromEntries(
      (await otel.points(METRIC_NAMES.idempotencyDecisions)).map((p) => [
        p.attributes[ATTRIBUTES.idempotencyDecision],
        p.value,
      ]),
    );
    expect(counts).toEqual({ new: 2, replay: 1, mismatch: 1, in_progress: 1, missing: 1, invalid: 1 });
    // Its OpenAPI description is kept.
    expect(Object.keys(middlewareDescription(protect)?.responses ?? {})).toEqual(
      expect.arrayContaining(["409", "422"]),
    );
  });

  it("sets and counts the rate-limit decision", async () => {
    const limiter = instrumentRateLimiter(createRateLimiter({ policies: [{ name: "burst", quota: 1, window: 60 }] }), {
      meter: otel.meter,
    });
    const handler = rateLimit({ limiter, key: () => "caller", now: () => 1_000_000 })(() => ({
      status: 200,
      headers: {},
    }));
    const first = await inServerSpan(handler, post(undefined));
    const second = await inServerSpan(handler, post(undefined));
    expect(first.response.status).toBe(200);
    expect(first.attributes[ATTRIBUTES.rateLimitDecision]).toBe("allowed");
    expect(second.response.status).toBe(429);
    expect(second.attributes[ATTRIBUTES.rateLimitDecision]).toBe("limited");
    expect(await otel.points(METRIC_NAMES.rateLimitDecisions)).toEqual(
      expect.arrayContaining([
        { attributes: { [ATTRIBUTES.rateLimitDecision]: "allowed" }, value: 1 },
        { attributes: { [ATTRIBUTES.rateLimitDecision]: "limited" }, value: 1 },
      ]),
    );
  });

  it("regression: a meter that throws fails neither an idempotent request nor a rate-limited one", async () => {
    const { meter } = throwingTelemetry("meter");
    let ran = 0;
    const handler = tracedIdempotency(
      { store: new MemoryIdempotencyStore(), identify: () => "acct" },
      { meter },
    )(() => {
      ran++;
      return { status: 201, headers: {}, body: "created" };
    });
    // The handler ran: a 500 here would send the client to retry a POST that already took effect.
    expect((await inServerSpan(handler, post("k1"))).response.status).toBe(201);
    expect((await inServerSpan(handler, post("k1"))).response.status).toBe(201);
    expect(ran).toBe(1);
    const limiter = instrumentRateLimiter(createRateLimiter({ policies: [{ name: "burst", quota: 1, window: 60 }] }), {
      meter,
    });
    expect((await limiter.check("caller", 1_000_000)).allowed).toBe(true);
    expect((await limiter.check("caller", 1_000_000)).allowed).toBe(false);
  });
});
