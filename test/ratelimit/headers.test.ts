import { describe, expect, it } from "vitest";
import { parseList } from "../../src/http/structured-fields";
import {
  createRateLimiter,
  policyField,
  QUOTA_EXCEEDED_TYPE,
  quotaExceeded,
  type RateLimitDecision,
  type RateLimitPolicy,
  rateLimitHeaders,
  retryAfterSeconds,
  serviceLimitField,
} from "../../src/ratelimit/index";

function decision(results: [RateLimitPolicy, number, number][], allowed = true, retryAfterMs = 0): RateLimitDecision {
  return {
    allowed,
    retryAfterMs,
    results: results.map(([policy, remaining, resetSeconds]) => ({
      policy,
      allowed: remaining > 0 || allowed,
      remaining,
      resetSeconds,
      retryAfterSeconds: remaining > 0 ? 0 : resetSeconds,
    })),
  };
}

describe("RateLimit-Policy (draft-ietf-httpapi-ratelimit-headers §3)", () => {
  it.each<[string, RateLimitPolicy[], string]>([
    ["§3.2 a single policy", [{ name: "default", quota: 100, window: 10 }], '"default";q=100;w=10'],
    [
      "§3.2 several policies",
      [
        { name: "permin", quota: 50, window: 60 },
        { name: "perhr", quota: 1000, window: 3600 },
      ],
      '"permin";q=50;w=60,"perhr";q=1000;w=3600',
    ],
    [
      "§3 burst and daily",
      [
        { name: "burst", quota: 100, window: 60 },
        { name: "daily", quota: 1000, window: 86400 },
      ],
      '"burst";q=100;w=60,"daily";q=1000;w=86400',
    ],
    ["B.2.1", [{ name: "fixedwindow", quota: 100, window: 60 }], '"fixedwindow";q=100;w=60'],
  ])("serializes the draft's example %s", (_case, policies, example) => {
    const ours = policyField(policies);
    expect(parseList(ours)).toStrictEqual(parseList(example));
    expect(ours).toBe(example.replaceAll(",", ", ")); // RFC 9651 §4.1.1 canonical form
  });

  it("sends the item as a String and q, w as Integers (§3.1)", () => {
    const [member] = parseList(policyField([{ name: "a b", quota: 3, window: 7, burst: 9 }])) ?? [];
    expect(member).toStrictEqual({
      value: "a b",
      params: new Map([
        ["q", 3],
        ["w", 7],
      ]),
    });
  });
});

describe("RateLimit (draft §4)", () => {
  const defaultPolicy: RateLimitPolicy = { name: "default", quota: 100, window: 60 };

  it.each<[string, RateLimitDecision, string]>([
    ["§4 r=50 t=30", decision([[defaultPolicy, 50, 30]]), '"default";r=50;t=30'],
    ["B.1.1 r=0 t=50", decision([[defaultPolicy, 0, 50]]), '"default";r=0;t=50'],
    ["§7 r=1 t=7", decision([[defaultPolicy, 1, 7]]), '"default";r=1;t=7'],
    [
      "B.3.1 the day policy",
      decision([[{ name: "day", quota: 5000, window: 86400 }, 100, 36000]]),
      '"day";r=100;t=36000',
    ],
  ])("serializes the draft's example %s", (_case, value, example) => {
    expect(serviceLimitField(value)).toBe(example);
    expect(parseList(serviceLimitField(value))).toStrictEqual(parseList(example));
  });

  it("lists every policy that applies to the request", () => {
    const value = decision([
      [{ name: "second", quota: 10, window: 1 }, 9, 1],
      [{ name: "day", quota: 5000, window: 86400 }, 4999, 18],
    ]);
    expect(serviceLimitField(value)).toBe('"second";r=9;t=1, "day";r=4999;t=18');
  });
});

describe("Retry-After and the 429 problem", () => {
  const policies: RateLimitPolicy[] = [
    { name: "second", quota: 2, window: 1 },
    { name: "minute", quota: 5, window: 60 },
  ];

  it("names the violated policies and sends Retry-After no earlier than the effective window (draft §6)", async () => {
    const limiter = createRateLimiter({ policies });
    await limiter.check("k", 0);
    await limiter.check("k", 0);
    const refused = await limiter.check("k", 0);
    expect(refused.allowed).toBe(false);
    const problem = quotaExceeded(refused);
    const response = problem.toResponse();
    expect(response.status).toBe(429);
    expect(response.headers["content-type"]).toBe("application/problem+json");
    expect(response.headers["retry-after"]).toBe("1");
    expect(response.headers.ratelimit).toBe('"second";r=0;t=1, "minute";r=3;t=12');
    expect(response.headers["ratelimit-policy"]).toBe('"second";q=2;w=1, "minute";q=5;w=60');
    expect(JSON.parse(String(response.body))).toStrictEqual({
      type: QUOTA_EXCEEDED_TYPE,
      title: "Quota Exceeded",
      status: 429,
      code: "quota_exceeded",
      detail: "Too many requests; retry after 1 second.",
      "violated-policies": ["second"],
    });
    for (const result of refused.results) {
      if (result.remaining === 0) expect(retryAfterSeconds(refused)).toBeGreaterThanOrEqual(result.resetSeconds);
    }
  });

  // Regression: a 429 for an allowed decision said "retry after undefined seconds" and sent no Retry-After.
  it("refuses to build a 429 for an allowed decision", async () => {
    const allowed = await createRateLimiter({ policies }).check("k", 0);
    expect(allowed.allowed).toBe(true);
    expect(() => quotaExceeded(allowed)).toThrow(TypeError);
  });

  it("agrees with when the next request is admitted", async () => {
    const limiter = createRateLimiter({ policies: [{ name: "p", quota: 3, window: 10 }] });
    let now = 5_123;
    for (let i = 0; i < 3; i++) await limiter.check("k", now);
    const refused = await limiter.check("k", now);
    const headers = rateLimitHeaders(refused);
    expect(headers["retry-after"]).toBe("4"); // 3⅓ s rounded up
    now += Number(headers["retry-after"]) * 1000;
    expect((await limiter.check("k", now)).allowed).toBe(true);
  });

  it("sends no Retry-After on an admitted request", () => {
    expect(rateLimitHeaders(decision([[{ name: "p", quota: 1, window: 1 }, 0, 1]]))).not.toHaveProperty("retry-after");
  });
});
