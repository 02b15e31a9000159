import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatHeaderList, splitHeaderList } from "../../src/http/header-list";
import { formatQuotedString } from "../../src/http/quoted-string";

describe("comma-separated lists (RFC 9110 §5.6.1)", () => {
  it.each<[string, string[]]>([
    ["gzip, br", ["gzip", "br"]],
    ["gzip,br", ["gzip", "br"]],
    [" gzip \t,\tbr ", ["gzip", "br"]],
    ["", []],
    [" ", []],
    // §5.6.1.2: recipients accept and ignore empty elements
    [",", []],
    ["foo ,bar,", ["foo", "bar"]],
    ["foo , ,bar,charlie", ["foo", "bar", "charlie"]],
    [", , a", ["a"]],
    // §5.6.4: a comma inside a quoted-string does not separate elements
    ['"a,b", c', ['"a,b"', "c"]],
    ['W/"x,y", "z"', ['W/"x,y"', '"z"']],
    ['"a\\",b", c', ['"a\\",b"', "c"]],
    ['a;q="1,2";r=3, b', ['a;q="1,2";r=3', "b"]],
    // lenient: an unterminated quoted-string runs to the end
    ['a, "b, c', ["a", '"b, c']],
    ['a, "b\\', ["a", '"b\\']],
  ])("splits %j", (input, expected) => {
    expect(splitHeaderList(input)).toStrictEqual(expected);
  });

  it("splits repeated field lines joined with ', ' the same as one line (§5.3)", () => {
    expect(splitHeaderList(["a, b", "c"].join(", "))).toStrictEqual(["a", "b", "c"]);
  });

  it("formats with ', '", () => {
    expect(formatHeaderList(["gzip", "br"])).toBe("gzip, br");
    expect(formatHeaderList([])).toBe("");
  });

  it.each([[""], [" a"], ["a "], ["a,b"], ["a, b"], ['a"b'], ['"a\\'], ['"a\\"'], ['x="1'], ['"a" "b']])(
    "refuses the element %j",
    (element) => {
      expect(() => formatHeaderList([element])).toThrow(TypeError);
    },
  );

  it('refuses an element that opens a quoted-string it does not close (a"b swallowed the next element)', () => {
    expect(() => formatHeaderList(['a"b', "c"])).toThrow(TypeError);
    expect(formatHeaderList(['a"b"', "c"])).toBe('a"b", c');
    // A backslash outside a quoted-string escapes nothing.
    expect(splitHeaderList(formatHeaderList(["x\\", "y"]))).toStrictEqual(["x\\", "y"]);
  });

  it("whatever formatHeaderList accepts splits back to the same elements", () => {
    const anyElement = fc.string({ unit: fc.constantFrom(...'a," \t\\='), maxLength: 8 });
    fc.assert(
      fc.property(fc.array(anyElement, { maxLength: 5 }), (elements) => {
        let formatted: string;
        try {
          formatted = formatHeaderList(elements);
        } catch (error) {
          expect(error).toBeInstanceOf(TypeError);
          return;
        }
        expect(splitHeaderList(formatted)).toStrictEqual(elements);
      }),
      { numRuns: 3000 },
    );
  });

  const element = fc.oneof(
    fc.stringMatching(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/),
    fc.stringMatching(/^[\x20-\x7e]{0,10}$/).map(formatQuotedString),
    fc
      .tuple(fc.stringMatching(/^[a-z]+$/), fc.stringMatching(/^[\x20-\x7e]{0,6}$/))
      .map(([name, value]) => `${name}=${formatQuotedString(value)}`),
  );

  it("splitHeaderList(formatHeaderList(x)) equals x", () => {
    fc.assert(
      fc.property(fc.array(element, { maxLength: 6 }), (elements) => {
        expect(splitHeaderList(formatHeaderList(elements))).toStrictEqual(elements);
      }),
    );
  });

  it("never throws, and never yields an empty or OWS-padded element", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'a," \t\\'), maxLength: 20 }), (input) => {
        for (const part of splitHeaderList(input)) expect(part).toBe(part.trim());
      }),
    );
  });
});
