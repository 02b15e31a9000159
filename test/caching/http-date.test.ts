import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatHttpDate, parseHttpDate } from "../../src/caching/index";
import { anyFieldArb } from "./arbitraries";
import { expectCode } from "./expect-code";

const RFC_EXAMPLE = 784_111_777_000; // Sun, 06 Nov 1994 08:49:37 GMT
const NOW = Date.parse("2024-06-01T00:00:00Z");

describe("parseHttpDate (RFC 9110 §5.6.7)", () => {
  it.each([
    ["IMF-fixdate", "Sun, 06 Nov 1994 08:49:37 GMT"],
    ["rfc850-date", "Sunday, 06-Nov-94 08:49:37 GMT"],
    ["asctime-date", "Sun Nov  6 08:49:37 1994"],
    ["asctime-date with a two-digit day", "Sun Nov 06 08:49:37 1994"],
  ])("parses the RFC's %s example", (_form, value) => {
    expect(parseHttpDate(value, { now: NOW })).toBe(RFC_EXAMPLE);
  });

  it.each([
    ["lower-case day name", "sun, 06 Nov 1994 08:49:37 GMT"],
    ["lower-case month", "Sun, 06 nov 1994 08:49:37 GMT"],
    ["UTC instead of GMT", "Sun, 06 Nov 1994 08:49:37 UTC"],
    ["single-digit day", "Sun, 6 Nov 1994 08:49:37 GMT"],
    ["two-digit year in IMF-fixdate", "Sun, 06 Nov 94 08:49:37 GMT"],
    ["February 30", "Fri, 30 Feb 2024 08:49:37 GMT"],
    ["February 29 of a common year", "Thu, 29 Feb 2023 08:49:37 GMT"],
    ["hour 24", "Sun, 06 Nov 1994 24:00:00 GMT"],
    ["minute 60", "Sun, 06 Nov 1994 08:60:00 GMT"],
    ["ISO 8601", "1994-11-06T08:49:37Z"],
    ["a list of two dates", "Sun, 06 Nov 1994 08:49:37 GMT, Sun, 06 Nov 1994 08:49:37 GMT"],
    ["surrounding space", " Sun, 06 Nov 1994 08:49:37 GMT"],
    ["abbreviated day in rfc850", "Sun, 06-Nov-94 08:49:37 GMT"],
    ["four-digit year in rfc850", "Sunday, 06-Nov-1994 08:49:37 GMT"],
    ["asctime with zone", "Sun Nov  6 08:49:37 1994 GMT"],
    ["empty", ""],
    ["a letter in the year (once read as 1020)", "Sun, 06 Nov 202x 08:49:37 GMT"],
    ["a letter in the asctime year (once read as 990)", "Sun Nov  6 08:49:37 199x"],
    ["a colon in the year", "Sun, 06 Nov 19:4 08:49:37 GMT"],
    ["a letter in the day", "Sun, 0x Nov 1994 08:49:37 GMT"],
    ["a letter in the minute", "Sun, 06 Nov 1994 08:4x:37 GMT"],
    ["a letter in the rfc850 year", "Sunday, 06-Nov-9x 08:49:37 GMT"],
    ["non-ASCII characters that pack like a day and a month name", "S\u0000\u756e, 06 N\u0000\u6f76 1994 08:49:37 GMT"],
  ])("ignores %s", (_name, value) => {
    expect(parseHttpDate(value, { now: NOW })).toBeUndefined();
  });

  it("never accepts a non-digit where a DIGIT belongs (§5.6.7)", () => {
    const nonDigit = fc.string({ minLength: 1, maxLength: 1 }).filter((c) => !/[0-9]/.test(c));
    fc.assert(
      fc.property(
        fc.integer({ min: -62_167_219_200, max: 253_402_300_799 }).map((s) => s * 1000),
        fc.nat(),
        nonDigit,
        (ms, pick, c) => {
          const text = formatHttpDate(ms);
          const digits = [...text.matchAll(/[0-9]/g)].map((m) => m.index);
          const at = digits[pick % digits.length] as number;
          return parseHttpDate(text.slice(0, at) + c + text.slice(at + 1)) === undefined;
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("refuses a now that is not a finite number, naming the option", () => {
    for (const now of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(() => parseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT", { now })).toThrow(TypeError);
      // Misuse, whichever form the value has.
      expect(() => parseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT", { now })).toThrow(/now/);
    }
  });

  it("accepts February 29 of a leap year and a leap second", () => {
    expect(parseHttpDate("Thu, 29 Feb 2024 00:00:00 GMT")).toBe(Date.parse("2024-02-29T00:00:00Z"));
    expect(parseHttpDate("Sat, 31 Dec 2016 23:59:60 GMT")).toBe(Date.parse("2017-01-01T00:00:00Z"));
  });

  it("handles years before 100 without the Date.UTC 1900 shift", () => {
    expect(parseHttpDate("Mon, 01 Jan 0001 00:00:00 GMT")).toBe(new Date("0001-01-01T00:00:00Z").getTime());
  });

  describe("two-digit years of rfc850-date", () => {
    it("keeps a year up to 50 years ahead", () => {
      expect(parseHttpDate("Thursday, 01-Jan-70 00:00:00 GMT", { now: NOW })).toBe(Date.parse("2070-01-01T00:00:00Z"));
      expect(parseHttpDate("Monday, 01-Jan-24 00:00:00 GMT", { now: NOW })).toBe(Date.parse("2024-01-01T00:00:00Z"));
    });

    it("moves a year more than 50 years ahead back a century", () => {
      expect(parseHttpDate("Saturday, 01-Jan-80 00:00:00 GMT", { now: NOW })).toBe(Date.parse("1980-01-01T00:00:00Z"));
      expect(parseHttpDate("Friday, 31-Dec-99 23:59:59 GMT", { now: NOW })).toBe(Date.parse("1999-12-31T23:59:59Z"));
    });

    it("chooses the century before checking the date: 29-Feb-00 read in 2025 is 2000, not a missing 2100 day", () => {
      const now = Date.parse("2025-06-01T00:00:00Z");
      expect(parseHttpDate("Tuesday, 29-Feb-00 12:00:00 GMT", { now })).toBe(Date.parse("2000-02-29T12:00:00Z"));
      // Read in 2060, 2100 is within 50 years, and it has no 29 February.
      expect(parseHttpDate("Monday, 29-Feb-00 12:00:00 GMT", { now: Date.parse("2060-06-01T00:00:00Z") })).toBe(
        undefined,
      );
    });

    it("parses back every second within 50 years of now, leap days included", () => {
      const now = Date.parse("2025-06-01T00:00:00Z");
      const day = 86_400_000;
      const long = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
      // Every 29 February of the window, then any second of it.
      const leapDays = [1976, 1980, 1984, 1988, 1992, 1996, 2000, 2004, 2008, 2012, 2016, 2020, 2024].map((y) =>
        Date.UTC(y, 1, 29, 12),
      );
      const secondArb = fc.oneof(
        fc.constantFrom(...leapDays),
        fc
          .integer({ min: Math.ceil((now - 49 * 365 * day) / 1000), max: Math.floor((now + 49 * 365 * day) / 1000) })
          .map((s) => s * 1000),
      );
      fc.assert(
        fc.property(secondArb, (ms) => {
          const d = new Date(ms);
          const [, dd, mon, yyyy, time] = formatHttpDate(ms).replace(",", "").split(" ") as [
            string,
            string,
            string,
            string,
            string,
          ];
          const rfc850 = `${long[d.getUTCDay()]}, ${dd}-${mon}-${yyyy.slice(2)} ${time} GMT`;
          return parseHttpDate(rfc850, { now }) === ms;
        }),
        { numRuns: 1000 },
      );
    });

    it("compares full timestamps at the 50-year boundary", () => {
      const now = Date.parse("2024-06-01T00:00:00Z");
      expect(parseHttpDate("Wednesday, 01-Jun-74 00:00:00 GMT", { now })).toBe(Date.parse("2074-06-01T00:00:00Z"));
      expect(parseHttpDate("Wednesday, 01-Jun-74 00:00:01 GMT", { now })).toBe(Date.parse("1974-06-01T00:00:01Z"));
    });
  });

  it("never throws and only returns whole seconds", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), anyFieldArb), (value) => {
        const parsed = parseHttpDate(value);
        return parsed === undefined || parsed % 1000 === 0;
      }),
      { numRuns: 1000 },
    );
  });
});

describe("formatHttpDate", () => {
  it("writes IMF-fixdate, dropping milliseconds", () => {
    expect(formatHttpDate(RFC_EXAMPLE + 999)).toBe("Sun, 06 Nov 1994 08:49:37 GMT");
    expect(formatHttpDate(new Date(RFC_EXAMPLE))).toBe("Sun, 06 Nov 1994 08:49:37 GMT");
  });

  it("refuses what IMF-fixdate cannot express", () => {
    expectCode(() => formatHttpDate(Number.NaN), "invalid_date");
    expectCode(() => formatHttpDate(new Date("nope")), "invalid_date");
    expectCode(() => formatHttpDate(Date.parse("+010000-01-01T00:00:00Z")), "invalid_date");
  });

  const secondsArb = fc.integer({ min: -62_167_219_200, max: 253_402_300_799 }).map((s) => s * 1000);

  it("round-trips every second of years 0000-9999", () => {
    fc.assert(
      fc.property(secondsArb, (ms) => parseHttpDate(formatHttpDate(ms)) === ms),
      { numRuns: 2000 },
    );
  });

  it("agrees with the platform's Date.parse on IMF-fixdate", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4_102_444_800 }).map((s) => s * 1000),
        (ms) => {
          const text = formatHttpDate(ms);
          return parseHttpDate(text) === Date.parse(text);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("the three forms of one instant parse to the same time", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1_000_000_000, max: 2_000_000_000 }).map((s) => s * 1000),
        (ms) => {
          const d = new Date(ms);
          const imf = formatHttpDate(ms);
          const [dayName, day, month, year, time] = imf.replace(",", "").split(" ") as [
            string,
            string,
            string,
            string,
            string,
          ];
          const long = {
            Mon: "Monday",
            Tue: "Tuesday",
            Wed: "Wednesday",
            Thu: "Thursday",
            Fri: "Friday",
            Sat: "Saturday",
            Sun: "Sunday",
          }[dayName];
          const rfc850 = `${long}, ${day}-${month}-${year.slice(2)} ${time} GMT`;
          const asctime = `${dayName} ${month} ${String(d.getUTCDate()).padStart(2, " ")} ${time} ${year}`;
          const now = Date.parse("2024-06-01T00:00:00Z");
          return parseHttpDate(rfc850, { now }) === ms && parseHttpDate(asctime) === ms;
        },
      ),
      { numRuns: 500 },
    );
  });
});
