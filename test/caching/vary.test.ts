import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mergeVary, parseVary } from "../../src/caching/index";
import { lowerTokenArb } from "./arbitraries";
import { expectCode } from "./expect-code";

describe("Vary (RFC 9110 §12.5.5)", () => {
  it("parses to lower-case names without duplicates or malformed members", () => {
    expect(parseVary("Accept-Encoding, accept,  , Accept-Language, a b")).toEqual([
      "accept-encoding",
      "accept",
      "accept-language",
    ]);
    expect(parseVary(undefined)).toEqual([]);
  });

  it("parses * wherever it appears", () => {
    expect(parseVary("accept, *")).toBe("*");
  });

  it("merges case-insensitively, keeping the existing order", () => {
    expect(mergeVary("Accept", "accept-encoding", "ACCEPT")).toBe("accept, accept-encoding");
    expect(mergeVary(undefined, "Origin")).toBe("origin");
  });

  it("lets * absorb everything", () => {
    expect(mergeVary("accept", "*")).toBe("*");
    expect(mergeVary("*", "accept")).toBe("*");
  });

  it("refuses a name that is not a token", () => {
    expectCode(() => mergeVary("accept", "bad name"), "invalid_field_name");
  });

  it("merging is idempotent and order-insensitive as a set", () => {
    fc.assert(
      fc.property(fc.array(lowerTokenArb, { maxLength: 5 }), fc.array(lowerTokenArb, { maxLength: 5 }), (a, b) => {
        const once = mergeVary(a.join(", "), ...b);
        expect(mergeVary(once, ...b)).toBe(once);
        const all = [...a, ...b];
        if (all.includes("*")) expect(once).toBe("*");
        else expect(new Set(parseVary(once))).toEqual(new Set(all));
      }),
      { numRuns: 300 },
    );
  });
});
