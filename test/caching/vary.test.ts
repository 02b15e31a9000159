import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mergeVary, parseVary } from "../../src/caching/index";
import { lowerTokenArb } from "./arbitraries";
import { elementsWalked } from "./elements-walked";
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

  it("trims only OWS around a member (§5.6.3): a name with NBSP, VT or U+FEFF at an end is malformed", () => {
    expect(parseVary(" accept\t,\taccept-language ")).toEqual(["accept", "accept-language"]);
    expect(parseVary("accept\u00a0, \ufefforigin, \vx, \u00a0*")).toEqual([]);
    expectCode(() => mergeVary("accept", "origin\u00a0"), "invalid_field_name");
    expect(mergeVary("accept", " origin\t")).toBe("accept, origin");
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

  describe("work linear in the number of names (names.includes once made 100 KB take quadratic time)", () => {
    const names = (count: number, prefix = "h") => Array.from({ length: count }, (_, i) => `${prefix}${i}`);
    // 1 750 names is about 12 KB, 14 000 about 100 KB: 8 times the names must walk at most about 8 times the elements.
    const SMALL = 1_750;
    const LARGE = 14_000;

    it("parseVary", () => {
      const large = names(LARGE).join(", ");
      expect(large.length).toBeGreaterThan(100_000);
      expect(parseVary(`${large}, ${large.toUpperCase()}`)).toEqual(names(LARGE));
      const small = elementsWalked(() => parseVary(names(SMALL).join(",")));
      expect(elementsWalked(() => parseVary(names(LARGE).join(",")))).toBeLessThan(12 * small);
    });

    it("mergeVary", () => {
      expect(mergeVary(names(LARGE).join(", "), ...names(LARGE, "x"))).toBe(
        [...names(LARGE), ...names(LARGE, "x")].join(", "),
      );
      const walk = (count: number) => elementsWalked(() => mergeVary(names(count).join(","), ...names(count, "x")));
      expect(walk(LARGE)).toBeLessThan(12 * walk(SMALL));
    });
  });
});
