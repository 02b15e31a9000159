import { describe, expect, it } from "vitest";
import { CachingError, etagFromTime, formatHttpDate, formatLastModified } from "../../src/caching/index";

// Regression: a time that is neither a Date nor a number (an ISO string read from a row, null) threw a bare
// "time.getTime is not a function" TypeError that named neither the function nor the value.
describe("the time-formatting functions given something that is no time", () => {
  const iso = "2024-01-01T00:00:00Z";
  const cases: [string, () => unknown][] = [
    ["formatHttpDate", () => formatHttpDate(iso as never)],
    ["etagFromTime", () => etagFromTime(iso as never)],
    ["formatLastModified", () => formatLastModified(iso as never, Date.now())],
    ["formatLastModified", () => formatLastModified(Date.now(), null as never)],
  ];
  it.each(cases)("%s throws CachingError invalid_date naming itself and the value", (owner, call) => {
    let thrown: unknown;
    try {
      call();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(CachingError);
    expect(thrown).toMatchObject({ code: "invalid_date" });
    expect((thrown as Error).message).toContain(owner);
    expect((thrown as Error).message).toMatch(/"2024-01-01T00:00:00Z"|got null/);
  });

  it("reads a Date and epoch milliseconds as before", () => {
    const at = Date.UTC(2024, 0, 1);
    expect(formatHttpDate(new Date(at))).toBe("Mon, 01 Jan 2024 00:00:00 GMT");
    expect(formatHttpDate(at)).toBe("Mon, 01 Jan 2024 00:00:00 GMT");
    expect(formatLastModified(new Date(at), at + 5_000)).toBe("Mon, 01 Jan 2024 00:00:00 GMT");
    expect(etagFromTime(new Date(at))).toBe(etagFromTime(at));
  });
});
