import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type EntityTag,
  formatEntityTag,
  formatEntityTagList,
  parseEntityTag,
  parseEntityTagList,
  strongCompare,
  weakCompare,
} from "../../src/caching/index";
import { entityTagArb, entityTagListArb, owsArb } from "./arbitraries";
import { expectCode } from "./expect-code";

describe("parseEntityTag (RFC 9110 §8.8.3)", () => {
  it.each([
    ['"xyzzy"', { weak: false, tag: "xyzzy" }],
    ['W/"xyzzy"', { weak: true, tag: "xyzzy" }],
    ['""', { weak: false, tag: "" }],
    [' "a" ', { weak: false, tag: "a" }],
    ['"a,b"', { weak: false, tag: "a,b" }],
    ['"\u00e9"', { weak: false, tag: "\u00e9" }],
  ])("parses %s", (value, expected) => {
    expect(parseEntityTag(value)).toEqual(expected);
  });

  it.each([
    ["unquoted", "xyzzy"],
    ["lower-case weak prefix (%s is case-sensitive)", 'w/"a"'],
    ["space inside", '"a b"'],
    ["DQUOTE inside", '"a"b"'],
    ["unterminated", '"abc'],
    ["two tags", '"a", "b"'],
    ["control character", '"a\u0001"'],
    ["non-Latin-1 character", '"\u20ac"'],
    ["empty", ""],
  ])("rejects %s", (_name, value) => {
    expect(parseEntityTag(value)).toBeUndefined();
  });

  it("formats strong and weak tags", () => {
    expect(formatEntityTag({ weak: false, tag: "a" })).toBe('"a"');
    expect(formatEntityTag({ weak: true, tag: "a" })).toBe('W/"a"');
  });

  it("refuses to format a tag with a character outside etagc", () => {
    expectCode(() => formatEntityTag({ weak: false, tag: 'a"b' }), "invalid_entity_tag");
    expectCode(() => formatEntityTag({ weak: true, tag: "a b" }), "invalid_entity_tag");
    expectCode(() => formatEntityTagList([{ weak: false, tag: "\u20ac" }]), "invalid_entity_tag");
  });
});

describe("parseEntityTagList (§13.1.1)", () => {
  it.each([
    ["*", "*"],
    [" * ", "*"],
    [
      '"a", W/"b"',
      [
        { weak: false, tag: "a" },
        { weak: true, tag: "b" },
      ],
    ],
    [', ,"a",,', [{ weak: false, tag: "a" }]],
    ["", []],
    [
      '"a,b", "c"',
      [
        { weak: false, tag: "a,b" },
        { weak: false, tag: "c" },
      ],
    ],
  ])("parses %j", (value, expected) => {
    expect(parseEntityTagList(value)).toEqual(expected);
  });

  it.each([['"a", *'], ['"a" "b"'], ["a"], ['"a", b']])("rejects %j", (value) => {
    expect(parseEntityTagList(value)).toBeUndefined();
  });
});

describe("comparison (§8.8.3.2)", () => {
  it.each([
    ['W/"1"', 'W/"1"', false, true],
    ['W/"1"', 'W/"2"', false, false],
    ['W/"1"', '"1"', false, true],
    ['"1"', '"1"', true, true],
  ])("%s vs %s: strong=%s weak=%s (the RFC's table)", (a, b, strong, weak) => {
    expect(strongCompare(a, b)).toBe(strong);
    expect(weakCompare(a, b)).toBe(weak);
  });

  it("an invalid tag matches nothing, not even itself", () => {
    expect(weakCompare("abc", "abc")).toBe(false);
    expect(strongCompare("abc", "abc")).toBe(false);
  });

  it("strong match implies weak match", () => {
    fc.assert(
      fc.property(entityTagArb, entityTagArb, (a, b) => !strongCompare(a, b) || weakCompare(a, b)),
      { numRuns: 500 },
    );
    // Also on equal opaque-tags, where the implication has teeth.
    fc.assert(
      fc.property(entityTagArb, fc.boolean(), (a, weak) => {
        const b: EntityTag = { weak, tag: a.tag };
        return !strongCompare(a, b) || weakCompare(a, b);
      }),
      { numRuns: 500 },
    );
  });

  it("weak and strong comparison are symmetric", () => {
    fc.assert(
      fc.property(entityTagArb, entityTagArb, (a, b) => {
        return weakCompare(a, b) === weakCompare(b, a) && strongCompare(a, b) === strongCompare(b, a);
      }),
      { numRuns: 500 },
    );
  });

  it("weak comparison is reflexive; strong comparison is reflexive exactly on strong tags", () => {
    fc.assert(
      fc.property(entityTagArb, (a) => weakCompare(a, a) && strongCompare(a, a) === !a.weak),
      { numRuns: 300 },
    );
  });
});

describe("round trips", () => {
  it("parseEntityTag(formatEntityTag(x)) is x", () => {
    fc.assert(
      fc.property(entityTagArb, (tag) => {
        expect(parseEntityTag(formatEntityTag(tag))).toEqual(tag);
      }),
      { numRuns: 500 },
    );
  });

  it("parseEntityTagList(formatEntityTagList(x)) is x", () => {
    fc.assert(
      fc.property(entityTagListArb, (list) => {
        expect(parseEntityTagList(formatEntityTagList(list))).toEqual(list);
      }),
      { numRuns: 500 },
    );
  });

  it("any OWS and empty elements between members parse the same (§5.6.1)", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(entityTagArb, owsArb, fc.boolean()), { maxLength: 4 }), owsArb, (members, lead) => {
        const tags = members.map(([tag]) => tag);
        const value =
          lead + members.map(([tag, ows, extra]) => `${formatEntityTag(tag)}${ows}${extra ? ", " : ""}`).join(",");
        expect(parseEntityTagList(value)).toEqual(tags);
      }),
      { numRuns: 500 },
    );
  });
});
