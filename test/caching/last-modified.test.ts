import { describe, expect, it } from "vitest";
import { evaluatePreconditions, formatLastModified, settledLastModified } from "../../src/caching/index";
import { expectCode } from "./expect-code";

describe("formatLastModified (RFC 9110 §8.8.2.1)", () => {
  const date = Date.parse("2024-05-01T12:00:00Z");

  it("formats a past modification time as is", () => {
    expect(formatLastModified(new Date("2024-04-01T08:00:00Z"), date)).toBe("Mon, 01 Apr 2024 08:00:00 GMT");
  });

  it("replaces a future modification time with the message date", () => {
    expect(formatLastModified(new Date("2030-01-01T00:00:00Z"), new Date(date))).toBe("Wed, 01 May 2024 12:00:00 GMT");
  });

  it("refuses invalid times", () => {
    expectCode(() => formatLastModified(new Date("nope"), date), "invalid_date");
    expectCode(() => formatLastModified(date, Number.NaN), "invalid_date");
  });

  it.each([Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1e20, -1e20])(
    "refuses %s rather than sending the message date as the modification time",
    (time) => {
      expectCode(() => formatLastModified(time, date), "invalid_date");
      expectCode(() => formatLastModified(date, time), "invalid_date");
    },
  );

  it("still replaces the last instant a Date can hold with the message date", () => {
    expect(formatLastModified(8.64e15, date)).toBe("Wed, 01 May 2024 12:00:00 GMT");
  });
});

describe("settledLastModified (RFC 9110 §8.8.2.2)", () => {
  const second = Date.parse("2024-05-01T12:00:00Z");

  it("is undefined while the second of the change is not over, and the date once it is", () => {
    expect(settledLastModified(second + 300, second + 999)).toBeUndefined();
    expect(settledLastModified(second + 300, second + 300)).toBeUndefined();
    expect(settledLastModified(second + 300, second + 1_000)).toBe("Wed, 01 May 2024 12:00:00 GMT");
    // A future modification time is never settled.
    expect(settledLastModified(second + 5_000, second + 1_000)).toBeUndefined();
  });

  it("never lets a second change within one second pass If-Unmodified-Since (regression: the shop lost a PATCH)", () => {
    // A change at .300 and another at .800 of one second: the first is never sent as a date, so no client holds a
    // date the second change would pass.
    const first = second + 300;
    expect(settledLastModified(first, second + 500)).toBeUndefined();
    const sent = settledLastModified(second + 800, second + 1_200) as string;
    const request = { method: "PUT", headers: { "if-unmodified-since": sent } };
    expect(evaluatePreconditions(request, { lastModified: second + 800 }).kind).toBe("proceed");
    // A change after the date was sent is in a later second, and fails the condition.
    expect(evaluatePreconditions(request, { lastModified: second + 1_500 }).kind).toBe("precondition-failed");
  });

  it("refuses invalid times as formatLastModified does", () => {
    expectCode(() => settledLastModified(Number.NaN, second), "invalid_date");
  });
});
