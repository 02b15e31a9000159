import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { exponentialBackoff, scheduleBackoff } from "../../../src/webhooks/retry/backoff";

const mid = () => 0.5;

describe("exponentialBackoff", () => {
  it("refuses options that are not finite, naming the option (regression: capMs Infinity gave 5.76e20 ms, then Infinity)", () => {
    const refused: [Record<string, unknown>, RegExp][] = [
      [{ capMs: Number.POSITIVE_INFINITY }, /exponentialBackoff: capMs must be a non-negative number/],
      [{ capMs: Number.NaN }, /exponentialBackoff: capMs must be/],
      [{ capMs: -1 }, /exponentialBackoff: capMs must be/],
      [{ baseMs: Number.POSITIVE_INFINITY }, /exponentialBackoff: baseMs must be a non-negative number/],
      [{ baseMs: -1 }, /exponentialBackoff: baseMs must be/],
      [{ factor: Number.POSITIVE_INFINITY }, /exponentialBackoff: factor must be a finite number of 1 or more/],
      [{ factor: 0.5 }, /exponentialBackoff: factor must be/],
      [{ factor: Number.NaN }, /exponentialBackoff: factor must be/],
      [{ maxAttempts: 0 }, /exponentialBackoff: maxAttempts must be a positive integer/],
      [{ maxAttempts: 2.5 }, /exponentialBackoff: maxAttempts must be/],
      [{ maxAttempts: Number.POSITIVE_INFINITY }, /exponentialBackoff: maxAttempts must be/],
      [{ jitter: "half" }, /exponentialBackoff: jitter must be "full" or "none"/],
    ];
    for (const [options, message] of refused) {
      expect(() => exponentialBackoff(options as never), JSON.stringify(options)).toThrow(TypeError);
      expect(() => exponentialBackoff(options as never), JSON.stringify(options)).toThrow(message);
    }
  });

  it("gives 0, not NaN, for baseMs 0 whatever the growth (regression: 0 × Infinity)", () => {
    const policy = exponentialBackoff({ baseMs: 0, factor: 1e200, maxAttempts: 10, jitter: "none" });
    for (let n = 1; n < 10; n++) expect(policy(n, mid)).toBe(0);
  });

  it("every delay is a finite number within [0, capMs], however many attempts and however fast the growth", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1e12, noNaN: true }),
        fc.double({ min: 1, max: 1e300, noNaN: true }),
        fc.double({ min: 0, max: 1e15, noNaN: true }),
        fc.integer({ min: 1, max: 5_000 }),
        fc.constantFrom("full" as const, "none" as const),
        fc.double({ min: 0, max: 0.9999999, noNaN: true }),
        (baseMs, factor, capMs, attempts, jitter, r) => {
          const policy = exponentialBackoff({ baseMs, factor, capMs, maxAttempts: 10_000, jitter });
          const delay = policy(attempts, () => r) as number;
          expect(Number.isFinite(delay)).toBe(true);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThanOrEqual(capMs);
        },
      ),
    );
  });
});

describe("scheduleBackoff", () => {
  it("refuses a schedule with a delay that is not finite", () => {
    expect(() => scheduleBackoff([0, Number.POSITIVE_INFINITY])).toThrow(TypeError);
    expect(() => scheduleBackoff([0, Number.NaN])).toThrow(TypeError);
  });
});
