import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  finiteNumber,
  nonNegativeInteger,
  nonNegativeNumber,
  positiveInteger,
  positiveNumber,
} from "../../src/options/number-option";

// Anything a caller might pass where a number is expected, numbers of every kind included.
const anything = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(0, -0, 1, -1, 2 ** 53, 2 ** 53 - 1, Number.NaN, Infinity, -Infinity, 0.5),
  fc.string(),
  fc.constantFrom(undefined, null, true, {}, [], 10n),
);

const outcome = (check: () => number): number | TypeError => {
  try {
    return check();
  } catch (error) {
    if (error instanceof TypeError) return error;
    throw error;
  }
};

describe("numeric options", () => {
  it.each([
    ["positiveInteger", positiveInteger, (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 1],
    ["positiveNumber", positiveNumber, (v: unknown) => Number.isFinite(v) && (v as number) > 0],
    ["nonNegativeInteger", nonNegativeInteger, (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0],
    ["nonNegativeNumber", nonNegativeNumber, (v: unknown) => Number.isFinite(v) && (v as number) >= 0],
    ["finiteNumber", finiteNumber, (v: unknown) => Number.isFinite(v)],
  ] as const)("%s returns exactly the values it accepts, and refuses the rest with a TypeError", (_, check, fits) => {
    fc.assert(
      fc.property(anything, (value) => {
        const result = outcome(() => check("owner", "option", value));
        if (fits(value)) expect(result).toBe(value);
        else expect(result).toBeInstanceOf(TypeError);
      }),
    );
  });

  it("names the taker, the option and the value it got, in one wording", () => {
    expect(() => positiveInteger("createMemoryInbox", "maxDone", 0)).toThrow(
      new TypeError("createMemoryInbox: maxDone must be a positive integer, got 0."),
    );
    expect(() => positiveNumber("createWebhookConsumer", "inboxTimeoutMs", -5, "milliseconds")).toThrow(
      new TypeError("createWebhookConsumer: inboxTimeoutMs must be a positive number of milliseconds, got -5."),
    );
    expect(() => nonNegativeInteger("clientIp", "trustedProxies", "1")).toThrow(
      new TypeError('clientIp: trustedProxies must be a non-negative integer, got "1".'),
    );
    expect(() => positiveInteger("owner", "option", Object.create(null))).toThrow(
      new TypeError("owner: option must be a positive integer, got [object Object]."),
    );
    expect(() => positiveInteger("idempotency", "ttlMs", 1.5, "milliseconds")).toThrow(
      new TypeError("idempotency: ttlMs must be a positive integer number of milliseconds, got 1.5."),
    );
    expect(() => finiteNumber("DeliveryQueue.list", "since", Number.NaN, "epoch milliseconds")).toThrow(
      new TypeError("DeliveryQueue.list: since must be a finite number of epoch milliseconds, got NaN."),
    );
  });
});
