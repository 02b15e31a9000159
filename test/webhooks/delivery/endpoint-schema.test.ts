import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createEndpointRateLimiter } from "../../../src/ratelimit/endpoint-limiter";
import {
  createEndpointSchema,
  endpointPatchSchema,
  MAX_METADATA_KEYS,
  MAX_RATE_LIMIT,
  MIN_RATE_LIMIT,
  updateEndpointSchema,
} from "../../../src/webhooks/delivery/endpoint-schema";

const base = { url: "https://hooks.example.com/in", enabled_events: ["*"] };
const T0 = 1_700_000_000_000;

describe("rate_limit", () => {
  it.each([1e-300, 1e-12, 1e-6, MIN_RATE_LIMIT * 0.999, 0, -1, MAX_RATE_LIMIT + 1])(
    "refuses %s (regression: 1e-300 was accepted and the pacer threw on every admission)",
    (rate) => {
      for (const schema of [createEndpointSchema, updateEndpointSchema]) {
        const parsed = schema.safeParse({ ...base, rate_limit: rate });
        expect(parsed.success).toBe(false);
        expect(parsed.error?.issues[0]?.path).toEqual(["rate_limit"]);
      }
    },
  );

  it("accepts one a day up to 100,000 a second, and null for none", () => {
    for (const rate of [MIN_RATE_LIMIT, 1 / 3600, 0.5, 2.5, 1 / 3, MAX_RATE_LIMIT, null]) {
      expect(createEndpointSchema.safeParse({ ...base, rate_limit: rate }).success, String(rate)).toBe(true);
    }
  });

  it("every rate it accepts, the pacer runs (fast-check over every positive double, the pacer's own check)", async () => {
    const limiter = createEndpointRateLimiter();
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.double({ min: Number.MIN_VALUE, max: MAX_RATE_LIMIT, noNaN: true }), async (rate) => {
        const parsed = createEndpointSchema.safeParse({ ...base, rate_limit: rate });
        if (!parsed.success) return;
        const key = `ep_${run++}`;
        expect(await limiter.acquire(key, parsed.data.rate_limit as number, T0)).toEqual({ allowed: true });
        const second = await limiter.acquire(key, parsed.data.rate_limit as number, T0);
        if (!second.allowed) expect(Number.isFinite(second.retryAtMs)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});

describe("metadata", () => {
  const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, "v"]));

  it(`accepts ${MAX_METADATA_KEYS} keys and refuses one more (regression: 5,000 were accepted)`, () => {
    expect(createEndpointSchema.safeParse({ ...base, metadata: keys(MAX_METADATA_KEYS) }).success).toBe(true);
    const over = createEndpointSchema.safeParse({ ...base, metadata: keys(MAX_METADATA_KEYS + 1) });
    expect(over.error?.issues.map((issue) => issue.path)).toEqual([["metadata"]]);
    expect(updateEndpointSchema.safeParse({ metadata: keys(5_000) }).success).toBe(false);
  });

  it("refuses a key over 40 characters and a value over 500", () => {
    expect(createEndpointSchema.safeParse({ ...base, metadata: { ["k".repeat(41)]: "v" } }).success).toBe(false);
    expect(createEndpointSchema.safeParse({ ...base, metadata: { k: "v".repeat(501) } }).success).toBe(false);
    expect(createEndpointSchema.safeParse({ ...base, metadata: { ["k".repeat(40)]: "v".repeat(500) } }).success).toBe(
      true,
    );
  });

  it.each(["__proto__", "constructor", "prototype"])(
    "refuses the key %s, never drops it (regression: __proto__ vanished while the create succeeded)",
    (key) => {
      // As JSON.parse makes it: "__proto__" an own key.
      const body = JSON.parse(`{"url":"https://a.example/","enabled_events":["*"],"metadata":{"${key}":"x","k":"v"}}`);
      for (const schema of [createEndpointSchema, endpointPatchSchema]) {
        const parsed = schema.safeParse(body);
        expect(parsed.success).toBe(false);
        expect(parsed.error?.issues[0]?.path).toEqual(["metadata", key]);
      }
    },
  );
});
