import { describe, expect, it } from "vitest";
import { formatLastModified } from "../../src/caching/index";
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
