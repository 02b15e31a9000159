import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AttemptResult } from "../../../src/webhooks/delivery/attempt";
import { DELIVERY_DEFAULTS } from "../../../src/webhooks/delivery/defaults";
import {
  type DeliveryConfig,
  type DeliveryEvent,
  type DeliveryState,
  defaultDeliveryConfig,
  initialDeliveryState,
  transition,
} from "../../../src/webhooks/delivery/state-machine";
import { exponentialBackoff, scheduleBackoff } from "../../../src/webhooks/retry/backoff";

const T0 = 1_700_000_000_000;
const fixed: DeliveryConfig = { ...defaultDeliveryConfig, random: () => 0.5 };
const response = (status: number, retryAfterMs?: number): AttemptResult => ({
  kind: "response",
  status,
  retryAfterMs,
  durationMs: 3,
});
const error = (errorKind: Extract<AttemptResult, { kind: "error" }>["errorKind"]): AttemptResult => ({
  kind: "error",
  errorKind,
  durationMs: 3,
});
const attempt = (result: AttemptResult): DeliveryEvent => ({ type: "attempt", result });
const afterAttempts = (attempts: number, status: DeliveryState["status"] = "failed"): DeliveryState => ({
  ...initialDeliveryState(T0),
  status,
  attempts,
});

describe("transition table", () => {
  describe("from pending/failed, an attempt", () => {
    it.each([200, 201, 202, 204, 299])("%i → delivered, no retry", (status) => {
      const { state, effects } = transition(initialDeliveryState(T0), attempt(response(status)), T0 + 10, fixed);
      expect(state).toMatchObject({ status: "delivered", attempts: 1, nextAttemptAt: null, deliveredAt: T0 + 10 });
      expect(effects).toEqual([{ type: "notify", event: "delivery.delivered" }]);
    });

    it.each([
      ["500", response(500), "http_status"],
      ["502", response(502), "http_status"],
      ["301 (redirects are not followed)", response(301), "http_status"],
      ["404", response(404), "http_status"],
      ["400", response(400), "http_status"],
      ["time-out", error("timeout"), "timeout"],
      ["refused connection", error("connection_refused"), "connection_refused"],
      ["reset connection", error("connection_reset"), "connection_reset"],
      ["DNS failure", error("dns"), "dns"],
      ["TLS failure", error("tls"), "tls"],
      ["SSRF refusal", error("ssrf_blocked"), "ssrf_blocked"],
      ["oversized response", error("response_too_large"), "response_too_large"],
      ["request that could not be built or signed", error("request_invalid"), "request_invalid"],
    ] as const)("%s → failed, retry scheduled on the schedule", (_name, result, kind) => {
      const { state, effects } = transition(afterAttempts(1), attempt(result), T0, fixed);
      expect(state).toMatchObject({ status: "failed", attempts: 2, lastErrorKind: kind, nextAttemptAt: T0 + 300_000 });
      expect(effects).toContainEqual({ type: "schedule", at: T0 + 300_000 });
      expect(effects).toContainEqual({ type: "notify", event: "delivery.failed" });
    });

    it("the last attempt failing → exhausted, kept, no schedule", () => {
      const { state, effects } = transition(afterAttempts(7), attempt(response(500)), T0, fixed);
      expect(state).toMatchObject({ status: "exhausted", attempts: 8, nextAttemptAt: null, lastStatus: 500 });
      expect(effects).toEqual([{ type: "notify", event: "delivery.exhausted" }]);
    });

    it("410 Gone → exhausted and the endpoint is disabled (Standard Webhooks)", () => {
      const { state, effects } = transition(afterAttempts(0, "pending"), attempt(response(410)), T0, fixed);
      expect(state.status).toBe("exhausted");
      expect(effects).toContainEqual({ type: "disable_endpoint", reason: "gone" });
    });

    describe("a URL the policy refuses before any network work (url_refused: it cannot succeed until changed)", () => {
      it.each([
        ["the default retry decision", fixed],
        ["a retry decision answering true", { ...fixed, retryable: () => true }],
        ["a retry decision answering false", { ...fixed, retryable: () => false }],
      ])("→ parked as endpoint_disabled, the endpoint disabled url_refused, whatever %s says", (_name, config) => {
        const { state, effects } = transition(afterAttempts(1), attempt(error("url_refused")), T0, config);
        expect(state).toMatchObject({
          status: "exhausted",
          attempts: 2,
          nextAttemptAt: null,
          lastAttemptAt: T0,
          lastErrorKind: "endpoint_disabled",
        });
        expect(effects).toEqual([
          { type: "disable_endpoint", reason: "url_refused" },
          { type: "notify", event: "delivery.exhausted" },
        ]);
      });

      it("re-enabling's manual retry sends it again with a fresh schedule", () => {
        const parked = transition(afterAttempts(1), attempt(error("url_refused")), T0, fixed).state;
        expect(transition(parked, { type: "manual_retry" }, T0 + 5, fixed).state).toMatchObject({
          status: "pending",
          attempts: 0,
          nextAttemptAt: T0 + 5,
        });
      });

      it("a resolved address refused (ssrf_blocked) is still retried on the schedule", () => {
        const { state, effects } = transition(afterAttempts(1), attempt(error("ssrf_blocked")), T0, fixed);
        expect(state).toMatchObject({ status: "failed", lastErrorKind: "ssrf_blocked" });
        expect(effects.some((effect) => effect.type === "disable_endpoint")).toBe(false);
      });
    });

    it.each([429, 503])("%i with Retry-After is honoured, bounded by twice the scheduled delay", (status) => {
      const scheduled = 300_000; // after the second attempt
      const longer = transition(afterAttempts(1), attempt(response(status, 400_000)), T0, fixed);
      expect(longer.state.nextAttemptAt).toBe(T0 + 400_000);
      const tooLong = transition(afterAttempts(1), attempt(response(status, 86_400_000)), T0, fixed);
      expect(tooLong.state.nextAttemptAt).toBe(T0 + 2 * scheduled);
      const shorter = transition(afterAttempts(1), attempt(response(status, 1_000)), T0, fixed);
      expect(shorter.state.nextAttemptAt).toBe(T0 + scheduled);
    });

    describe("Retry-After when the scheduled delay is 0 (full jitter, a 0 in a schedule)", () => {
      const zero: DeliveryConfig = {
        ...fixed,
        retry: exponentialBackoff({ baseMs: 1_000, capMs: 3_600_000 }),
        random: () => 0,
      };

      it("is honoured up to the floor (60 s by default), not dropped", () => {
        expect(transition(afterAttempts(1), attempt(response(429, 30_000)), T0, zero).state.nextAttemptAt).toBe(
          T0 + 30_000,
        );
        expect(transition(afterAttempts(1), attempt(response(503, 86_400_000)), T0, zero).state.nextAttemptAt).toBe(
          T0 + 60_000,
        );
      });

      it("the floor is configurable", () => {
        const config = { ...zero, retryAfterFloorMs: 5_000 };
        expect(transition(afterAttempts(1), attempt(response(429, 30_000)), T0, config).state.nextAttemptAt).toBe(
          T0 + 5_000,
        );
      });

      it("the schedule's cap still bounds it", () => {
        const short = { ...fixed, retry: scheduleBackoff([0, 0, 10], 0) };
        expect(transition(afterAttempts(0), attempt(response(429, 30_000)), T0, short).state.nextAttemptAt).toBe(
          T0 + 10,
        );
      });

      it("a retry policy without a cap is bounded by the floor alone", () => {
        const bare = { ...fixed, retry: () => 0 };
        expect(transition(afterAttempts(1), attempt(response(429, 120_000)), T0, bare).state.nextAttemptAt).toBe(
          T0 + 60_000,
        );
      });
    });

    it.each([Number.NaN, -1, Number.NEGATIVE_INFINITY, "soon" as unknown as number])(
      "a Retry-After of %s from a custom dispatcher is ignored, the schedule kept (regression: a NaN due time no queue stores, re-sent at every lease end)",
      (retryAfterMs) => {
        const { state, effects } = transition(afterAttempts(1), attempt(response(429, retryAfterMs)), T0, fixed);
        expect(state.status).toBe("failed");
        expect(state.nextAttemptAt).toBe(T0 + 300_000);
        expect(effects).toContainEqual({ type: "schedule", at: T0 + 300_000 });
      },
    );

    it("Retry-After on another status is ignored", () => {
      const { state } = transition(afterAttempts(1), attempt(response(500, 400_000)), T0, fixed);
      expect(state.nextAttemptAt).toBe(T0 + 300_000);
    });

    it("a replaced retry decision is used", () => {
      const never: DeliveryConfig = { ...fixed, retryable: () => false };
      expect(transition(afterAttempts(0), attempt(response(500)), T0, never).state.status).toBe("exhausted");
    });
  });

  it("defer moves the due time without counting an attempt", () => {
    const { state, effects } = transition(afterAttempts(2), { type: "defer", until: T0 + 99 }, T0, fixed);
    expect(state).toMatchObject({ status: "failed", attempts: 2, nextAttemptAt: T0 + 99 });
    expect(effects).toEqual([{ type: "schedule", at: T0 + 99 }]);
  });

  it("endpoint_disabled parks a scheduled delivery as exhausted", () => {
    const { state } = transition(afterAttempts(2), { type: "endpoint_disabled" }, T0, fixed);
    expect(state).toMatchObject({ status: "exhausted", lastErrorKind: "endpoint_disabled", nextAttemptAt: null });
  });

  it.each(["failed", "exhausted", "pending"] as const)("manual retry from %s → pending now, fresh schedule", (from) => {
    const { state, effects } = transition(afterAttempts(8, from), { type: "manual_retry" }, T0 + 5, fixed);
    expect(state).toMatchObject({ status: "pending", attempts: 0, nextAttemptAt: T0 + 5 });
    expect(effects).toEqual([{ type: "schedule", at: T0 + 5 }]);
  });

  it("exhausted ignores attempts and defers (only a manual retry revives it)", () => {
    const exhausted = afterAttempts(8, "exhausted");
    expect(transition(exhausted, attempt(response(200)), T0, fixed)).toEqual({ state: exhausted, effects: [] });
    expect(transition(exhausted, attempt(response(200)), T0, fixed).state).toBe(exhausted);
    expect(transition(exhausted, { type: "defer", until: T0 }, T0, fixed).state).toBe(exhausted);
  });

  it("exhausted + endpoint_disabled → unchanged, no effect (already parked, not notified twice)", () => {
    const exhausted = { ...afterAttempts(8, "exhausted"), nextAttemptAt: null, lastErrorKind: "http_status" as const };
    const next = transition(exhausted, { type: "endpoint_disabled" }, T0, fixed);
    expect(next.state).toBe(exhausted);
    expect(next.effects).toEqual([]);
  });
});

const results: fc.Arbitrary<AttemptResult> = fc.oneof(
  fc.record({
    kind: fc.constant("response" as const),
    status: fc.integer({ min: 100, max: 599 }),
    retryAfterMs: fc.option(fc.nat(10 ** 9), { nil: undefined }),
    durationMs: fc.nat(20_000),
  }),
  fc.record({
    kind: fc.constant("error" as const),
    errorKind: fc.constantFrom(
      "timeout",
      "connection_refused",
      "connection_reset",
      "dns",
      "tls",
      "ssrf_blocked",
      "url_refused",
      "request_invalid",
    ),
    durationMs: fc.nat(20_000),
  }),
);
const events: fc.Arbitrary<DeliveryEvent> = fc.oneof(
  { weight: 6, arbitrary: results.map((result) => ({ type: "attempt" as const, result })) },
  { weight: 1, arbitrary: fc.nat(10 ** 7).map((d) => ({ type: "defer" as const, until: T0 + d })) },
  { weight: 1, arbitrary: fc.constant({ type: "endpoint_disabled" as const }) },
  { weight: 1, arbitrary: fc.constant({ type: "manual_retry" as const }) },
);

describe("laws", () => {
  it("no delivered delivery is ever retried or changed", () => {
    fc.assert(
      fc.property(fc.array(events, { maxLength: 40 }), fc.double({ min: 0, max: 0.999, noNaN: true }), (seq, r) => {
        const config = { ...defaultDeliveryConfig, random: () => r };
        let state = initialDeliveryState(T0);
        let now = T0;
        for (const event of seq) {
          const wasDelivered = state.status === "delivered";
          const before = state;
          const next = transition(state, event, now, config);
          if (wasDelivered) {
            expect(next.state).toBe(before);
            expect(next.effects).toEqual([]);
          }
          state = next.state;
          now += 1000;
        }
      }),
    );
  });

  it("attempts never exceed the schedule's length without a manual retry; scheduled means due later", () => {
    fc.assert(
      fc.property(fc.array(results, { maxLength: 20 }), fc.double({ min: 0, max: 0.999, noNaN: true }), (seq, r) => {
        const config = { ...defaultDeliveryConfig, random: () => r };
        let state = initialDeliveryState(T0);
        for (const result of seq) {
          const next = transition(state, { type: "attempt", result }, T0, config);
          for (const effect of next.effects)
            if (effect.type === "schedule") expect(effect.at).toBeGreaterThanOrEqual(T0);
          state = next.state;
          expect(state.attempts).toBeLessThanOrEqual(8);
        }
      }),
    );
  });

  it("a Retry-After delay stays within [scheduled, max(scheduled, min(max(2 × scheduled, floor), cap))]", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 7 }),
        fc.double({ min: 0, max: 0.999, noNaN: true }),
        fc.nat(10 ** 9),
        fc.constantFrom(429, 503),
        fc.constantFrom(scheduleBackoff(), exponentialBackoff(), exponentialBackoff({ baseMs: 10, capMs: 500 })),
        (attempts, r, retryAfterMs, status, policy) => {
          const config = { ...defaultDeliveryConfig, retry: policy, random: () => r };
          const scheduled = policy(attempts, () => r);
          const next = transition(afterAttempts(attempts - 1), attempt(response(status, retryAfterMs)), T0, config);
          if (scheduled === undefined) return;
          const delay = (next.state.nextAttemptAt as number) - T0;
          const bound = Math.max(scheduled, Math.min(Math.max(2 * scheduled, 60_000), policy.capMs));
          expect(delay).toBeGreaterThanOrEqual(scheduled);
          expect(delay).toBeLessThanOrEqual(bound);
          expect(delay).toBe(Math.max(scheduled, Math.min(retryAfterMs, bound)));
        },
      ),
    );
  });

  it("a failed delivery always has a due time; delivered and exhausted never do", () => {
    fc.assert(
      fc.property(fc.array(events, { maxLength: 30 }), (seq) => {
        let state = initialDeliveryState(T0);
        for (const event of seq) {
          state = transition(state, event, T0, fixed).state;
          if (state.status === "failed" || state.status === "pending") expect(state.nextAttemptAt).not.toBeNull();
          else expect(state.nextAttemptAt).toBeNull();
        }
      }),
    );
  });
});

describe("a custom retry policy's delay (regression: a delay no clock can hold was re-sent forever)", () => {
  const MAX = DELIVERY_DEFAULTS.maxRetryDelayMs;
  const withDelay = (delay: number): DeliveryConfig => ({ ...fixed, retry: () => delay });

  it.each([
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["-Infinity", Number.NEGATIVE_INFINITY],
  ])("%s ends the schedule: exhausted, as when the policy answers undefined", (_name, delay) => {
    const { state, effects } = transition(afterAttempts(1), attempt(response(500)), T0, withDelay(delay));
    expect(state).toMatchObject({
      status: "exhausted",
      attempts: 2,
      nextAttemptAt: null,
      lastErrorKind: "http_status",
    });
    expect(effects).toEqual([{ type: "notify", event: "delivery.exhausted" }]);
  });

  it("a negative delay is no delay; a finite one past the limit waits maxRetryDelayMs", () => {
    expect(transition(afterAttempts(1), attempt(response(500)), T0, withDelay(-5)).state.nextAttemptAt).toBe(T0);
    for (const delay of [MAX + 1, 5.76e20, Number.MAX_VALUE]) {
      const next = transition(afterAttempts(1), attempt(response(500)), T0, withDelay(delay));
      expect(next.state).toMatchObject({ status: "failed", nextAttemptAt: T0 + MAX });
      expect(next.effects).toContainEqual({ type: "schedule", at: T0 + MAX });
    }
    // A Retry-After does not stretch it past the limit either.
    const config = { ...withDelay(MAX), retryAfterFactor: 10 };
    expect(transition(afterAttempts(1), attempt(response(503, 10 * MAX)), T0, config).state.nextAttemptAt).toBe(
      T0 + MAX,
    );
  });

  it("whatever number the policy answers, a failed delivery is due within [now, now + maxRetryDelayMs]", () => {
    fc.assert(
      fc.property(fc.double(), fc.option(fc.nat(2 ** 40), { nil: undefined }), (delay, retryAfterMs) => {
        const { state } = transition(afterAttempts(1), attempt(response(429, retryAfterMs)), T0, withDelay(delay));
        if (state.status === "exhausted") {
          expect(Number.isFinite(delay)).toBe(false);
          return;
        }
        expect(state.status).toBe("failed");
        expect(state.nextAttemptAt).toBeGreaterThanOrEqual(T0);
        expect(state.nextAttemptAt).toBeLessThanOrEqual(T0 + MAX);
      }),
    );
  });
});

describe("backoff", () => {
  it("the default is the Standard Webhooks schedule: 8 attempts over about 27.6 h", () => {
    const policy = scheduleBackoff();
    const mid = () => 0.5;
    const delays = [1, 2, 3, 4, 5, 6, 7].map((n) => policy(n, mid) ?? Number.NaN);
    expect(policy.firstDelayMs).toBe(0);
    expect(delays).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(policy(8, mid)).toBeUndefined();
    expect(policy.maxAttempts).toBe(8);
    const total = delays.reduce((a, b) => a + b, 0);
    expect(total / 3_600_000).toBeCloseTo(27.58, 1);
  });

  it("jitter stays within ±20 % and the total within the bounded schedule", () => {
    const policy = scheduleBackoff();
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 0.9999999, noNaN: true }), { minLength: 7, maxLength: 7 }),
        (rs) => {
          let total = 0;
          for (let n = 1; n <= 7; n++) {
            const d = policy(n, () => rs[n - 1] as number) as number;
            expect(d).toBeGreaterThanOrEqual(0);
            expect(d).toBeLessThanOrEqual(policy.capMs);
            total += d;
          }
          expect(total).toBeLessThanOrEqual(Math.ceil(99_305_000 * 1.2) + 7);
          expect(total).toBeGreaterThanOrEqual(Math.floor(99_305_000 * 0.8) - 7);
        },
      ),
    );
  });

  it("exponential full jitter stays within [0, cap] and stops after maxAttempts", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 0, max: 10 ** 7 }),
        fc.integer({ min: 1, max: 30 }),
        fc.double({ min: 0, max: 0.9999999, noNaN: true }),
        (baseMs, capMs, maxAttempts, r) => {
          const policy = exponentialBackoff({ baseMs, capMs, maxAttempts });
          let total = 0;
          for (let n = 1; n < maxAttempts; n++) {
            const d = policy(n, () => r) as number;
            expect(d).toBeGreaterThanOrEqual(0);
            expect(d).toBeLessThanOrEqual(capMs);
            total += d;
          }
          expect(total).toBeLessThanOrEqual(capMs * maxAttempts);
          expect(policy(maxAttempts, () => r)).toBeUndefined();
        },
      ),
    );
  });

  it("refuses a malformed schedule (programmer error)", () => {
    expect(() => scheduleBackoff([])).toThrow(TypeError);
    expect(() => scheduleBackoff([1, -1])).toThrow(TypeError);
    expect(() => scheduleBackoff([1], 2)).toThrow(TypeError);
  });
});
