import { describe, expect, it } from "vitest";
import { evaluateIfRange, type Validators } from "../../src/caching/index";
import type { RequestHeaders } from "../../src/http/message";

const CURRENT: Validators = { etag: '"v2"', lastModified: "Wed, 01 May 2024 12:00:00 GMT" };
const RANGE = "bytes=0-99";

describe("evaluateIfRange (RFC 9110 §13.1.5, §13.2.2 step 5)", () => {
  it.each<[string, string, RequestHeaders, Validators | undefined, "range" | "full", boolean?]>([
    ["no Range: nothing to honour", "GET", { "if-range": '"v2"' }, CURRENT, "full"],
    ["Range without If-Range", "GET", { range: RANGE }, CURRENT, "range"],
    ["Range on HEAD is not defined (§14.2)", "HEAD", { range: RANGE }, CURRENT, "full"],
    ["matching strong tag", "GET", { range: RANGE, "if-range": '"v2"' }, CURRENT, "range"],
    ["stale tag", "GET", { range: RANGE, "if-range": '"v1"' }, CURRENT, "full"],
    ["weak tag never matches", "GET", { range: RANGE, "if-range": 'W/"v2"' }, CURRENT, "full"],
    ["weak current tag never matches", "GET", { range: RANGE, "if-range": '"v2"' }, { etag: 'W/"v2"' }, "full"],
    ["no current representation", "GET", { range: RANGE, "if-range": '"v2"' }, undefined, "full"],
    [
      "date is weak unless declared strong",
      "GET",
      { range: RANGE, "if-range": "Wed, 01 May 2024 12:00:00 GMT" },
      CURRENT,
      "full",
    ],
    ["exact strong date", "GET", { range: RANGE, "if-range": "Wed, 01 May 2024 12:00:00 GMT" }, CURRENT, "range", true],
    [
      "later date is no exact match",
      "GET",
      { range: RANGE, "if-range": "Thu, 02 May 2024 12:00:00 GMT" },
      CURRENT,
      "full",
      true,
    ],
    ["garbage", "GET", { range: RANGE, "if-range": "v2" }, CURRENT, "full", true],
    // §5.6.3: only SP and HTAB are OWS; String.prototype.trim once read these as the tag or the date.
    ["a tag with OWS around it", "GET", { range: RANGE, "if-range": ' \t"v2"\t ' }, CURRENT, "range"],
    ["a tag followed by NBSP", "GET", { range: RANGE, "if-range": '"v2"\u00a0' }, CURRENT, "full"],
    ["a tag preceded by U+FEFF", "GET", { range: RANGE, "if-range": '\ufeff"v2"' }, CURRENT, "full"],
    ["a tag followed by VT", "GET", { range: RANGE, "if-range": '"v2"\v' }, CURRENT, "full"],
    [
      "a strong date followed by NBSP",
      "GET",
      { range: RANGE, "if-range": "Wed, 01 May 2024 12:00:00 GMT\u00a0" },
      CURRENT,
      "full",
      true,
    ],
  ])("%s", (_name, method, headers, current, expected, lastModifiedIsStrong) => {
    expect(evaluateIfRange({ method, headers }, current, { lastModifiedIsStrong })).toBe(expected);
  });

  // Regression: a bad `now` threw only for an If-Range date, so a client's header decided between a 500 and an answer.
  it("refuses a now that is not a finite number whatever the request carries", () => {
    const requests: RequestHeaders[] = [
      {},
      { range: RANGE, "if-range": '"v2"' },
      { range: RANGE, "if-range": "Wed, 01 May 2024 12:00:00 GMT" },
    ];
    for (const headers of requests) {
      expect(() => evaluateIfRange({ method: "GET", headers }, CURRENT, { now: Number.NaN })).toThrow(
        /^evaluateIfRange: now must be a finite number/,
      );
    }
  });

  // Regression: a lastModified that was no time (an ISO 8601 text) was read as none, so a strong date never matched.
  it("refuses a lastModified that is no time, whatever the request carries", () => {
    const dated = { range: RANGE, "if-range": "Wed, 01 May 2024 12:00:00 GMT" };
    for (const lastModified of ["2024-05-01T12:00:00Z", new Date(Number.NaN), Number.POSITIVE_INFINITY]) {
      for (const headers of [{}, dated]) {
        expect(() => evaluateIfRange({ method: "GET", headers }, { lastModified })).toThrow(
          /^evaluateIfRange: lastModified /,
        );
      }
    }
    const current = { lastModified: new Date("2024-05-01T12:00:00.250Z") };
    expect(evaluateIfRange({ method: "GET", headers: dated }, current, { lastModifiedIsStrong: true })).toBe("range");
  });

  // Regression: an etag of the wrong type (a number, null) answered "full" or threw a bare property-read TypeError,
  // depending on the request; evaluatePreconditions refuses it, naming it.
  it("refuses an etag or a current of the wrong type, whatever the request carries", () => {
    const tagged = { range: RANGE, "if-range": '"42"' };
    for (const etag of [42, null, { tag: "42" }]) {
      for (const headers of [{}, tagged]) {
        const current = { etag } as unknown as Validators;
        expect(() => evaluateIfRange({ method: "GET", headers }, current)).toThrow(/^evaluateIfRange: etag /);
      }
    }
    expect(() => evaluateIfRange({ method: "GET", headers: tagged }, null as unknown as Validators)).toThrow(
      /^evaluateIfRange: current must be /,
    );
  });
});
