import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type BareItem,
  item,
  parseDictionary,
  parseItem,
  parseList,
  type SfInnerList,
  type SfItem,
  type SfMember,
  serializeDictionary,
  serializeItem,
  serializeList,
  Token,
} from "../../src/http/structured-fields";

const bytes = (text: string) => new TextEncoder().encode(text);
const inner = (items: SfItem[], params: Record<string, BareItem> = {}): SfInnerList => ({
  items,
  params: new Map(Object.entries(params)),
});
const t = (value: string) => new Token(value);

describe("structured fields (RFC 9651)", () => {
  describe("items (§3.3)", () => {
    it.each<[string, string, BareItem]>([
      ["Integer", "42", 42],
      ["negative Integer", "-42", -42],
      ["Integer with 15 digits", "999999999999999", 999_999_999_999_999],
      ["Decimal", "4.5", 4.5],
      ["Decimal with 12.3 digits", "-123456789012.123", -123456789012.123],
      ["String", '"hello world"', "hello world"],
      ["String with escapes", '"a \\"b\\" \\\\c"', 'a "b" \\c'],
      ["Token", "foo123/456", t("foo123/456")],
      ["Token with *", "*foo", t("*foo")],
      ["Byte Sequence", ":cHJldGVuZCB0aGlzIGlzIGJpbmFyeSBjb250ZW50Lg==:", bytes("pretend this is binary content.")],
      ["empty Byte Sequence", "::", new Uint8Array(0)],
      ["Boolean true", "?1", true],
      ["Boolean false", "?0", false],
    ])("parses a %s (§3.3)", (_name, input, value) => {
      expect(parseItem(input)).toStrictEqual(item(value));
    });

    it("parses an Idempotency-Key (draft-ietf-httpapi-idempotency-key-header §2: an sf-string)", () => {
      expect(parseItem('"8e03978e-40d5-43e8-bc93-6894a57f9324"')?.value).toBe("8e03978e-40d5-43e8-bc93-6894a57f9324");
    });

    it("parses parameters, with SP allowed after ';' (§4.2.3.2)", () => {
      expect(parseItem("5; foo=bar;baz")).toStrictEqual(item(5, { foo: t("bar"), baz: true }));
    });

    it("keeps the last value of a repeated parameter in the first position (§4.2.3.2)", () => {
      const parsed = parseItem("1;a=1;b=2;a=3");
      expect([...(parsed?.params ?? [])]).toStrictEqual([
        ["a", 3],
        ["b", 2],
      ]);
    });

    it("ignores leading and trailing SP but not other whitespace (§4.2 steps 2, 6)", () => {
      expect(parseItem("  1  ")).toStrictEqual(item(1));
      expect(parseItem("\t1")).toBeUndefined();
    });

    it("normalises -0 to 0", () => {
      expect(Object.is(parseItem("-0")?.value, 0)).toBe(true);
    });

    it.each([
      ["empty", ""],
      ["16-digit Integer", "1234567890123456"],
      ["13-digit Decimal integer part", "1234567890123.5"],
      ["4 fractional digits", "1.5555"],
      ["trailing dot", "1."],
      ["lone minus", "-"],
      ["unterminated String", '"abc'],
      ["bad escape", '"\\a"'],
      ["control character in String", '"a\tb"'],
      ["non-ASCII in String", '"é"'],
      ["non-ASCII token", "é"],
      ["Boolean ?2", "?2"],
      ["Byte Sequence with a bad character", ":abc!:"],
      ["unterminated Byte Sequence", ":aGk="],
      ["misplaced padding", ":a=GVsbG8=:"],
      ["upper-case parameter key", "1;A=1"],
      ["parameter key starting with a digit", "1;1a=1"],
      ["trailing garbage", "1 2"],
      ["Date (RFC 9651 §3.3.7, no BareItem form)", "@1659578233"],
      ["Display String (RFC 9651 §3.3.8, no BareItem form)", '%"f%c3%bc"'],
      ["an Inner List where an Item is expected", "(1 2)"],
    ])("fails the whole field on %s (§4.2)", (_name, input) => {
      expect(parseItem(input)).toBeUndefined();
    });
  });

  describe("lists (§3.1)", () => {
    it("parses tokens (§3.1 example)", () => {
      expect(parseList("sugar, tea, rum")).toStrictEqual([item(t("sugar")), item(t("tea")), item(t("rum"))]);
    });

    it("parses inner lists, including an empty one (§3.1.1 example)", () => {
      expect(parseList('("foo" "bar"), ("baz"), ("bat" "one"), ()')).toStrictEqual([
        inner([item("foo"), item("bar")]),
        inner([item("baz")]),
        inner([item("bat"), item("one")]),
        inner([]),
      ]);
    });

    it("parses parameters on inner lists and their items (§3.1.1 example)", () => {
      expect(parseList('("foo"; a=1;b=2);lvl=5, ("bar" "baz");lvl=1')).toStrictEqual([
        inner([item("foo", { a: 1, b: 2 })], { lvl: 5 }),
        inner([item("bar"), item("baz")], { lvl: 1 }),
      ]);
    });

    it("parses the §3.1.2 parameter example", () => {
      expect(parseList('abc;a=1;b=2; cde_456, (ghi;jk=4 l);q="9";r=w')).toStrictEqual([
        item(t("abc"), { a: 1, b: 2, cde_456: true }),
        inner([item(t("ghi"), { jk: 4 }), item(t("l"))], { q: "9", r: t("w") }),
      ]);
    });

    it("allows OWS (SP and HTAB) around commas, as joined field lines have (§4.2.1)", () => {
      expect(parseList("1 ,\t2")).toStrictEqual([item(1), item(2)]);
    });

    it("treats an empty value as an empty list (§4.2.1)", () => {
      expect(parseList("")).toStrictEqual([]);
      expect(parseList("   ")).toStrictEqual([]);
    });

    it.each([
      ["trailing comma", "1, 2,"],
      ["empty member", "1, , 2"],
      ["leading comma", ", 1"],
      ["unterminated inner list", "(1 2"],
      ["inner list items without SP", '("a""b")'],
      ["missing comma", "1 2"],
    ])("fails on %s (§4.2.1)", (_name, input) => {
      expect(parseList(input)).toBeUndefined();
    });
  });

  describe("dictionaries (§3.2)", () => {
    it("parses Strings and Byte Sequences (§3.2 example)", () => {
      expect(parseDictionary('en="Applepie", da=:w4ZibGV0w6ZydGUK:')).toStrictEqual(
        new Map<string, SfMember>([
          ["en", item("Applepie")],
          ["da", item(new Uint8Array([0xc3, 0x86, 0x62, 0x6c, 0x65, 0x74, 0xc3, 0xa6, 0x72, 0x74, 0x65, 0x0a]))],
        ]),
      );
    });

    it("treats a key without a value as Boolean true (§3.2 example)", () => {
      expect(parseDictionary("a=?0, b, c; foo=bar")).toStrictEqual(
        new Map<string, SfMember>([
          ["a", item(false)],
          ["b", item(true)],
          ["c", item(true, { foo: t("bar") })],
        ]),
      );
    });

    it("parses inner lists as values (§3.2 examples)", () => {
      expect(parseDictionary("rating=1.5, feelings=(joy sadness)")).toStrictEqual(
        new Map<string, SfMember>([
          ["rating", item(1.5)],
          ["feelings", inner([item(t("joy")), item(t("sadness"))])],
        ]),
      );
      expect(parseDictionary("a=(1 2), b=3, c=4;aa=bb, d=(5 6);valid")).toStrictEqual(
        new Map<string, SfMember>([
          ["a", inner([item(1), item(2)])],
          ["b", item(3)],
          ["c", item(4, { aa: t("bb") })],
          ["d", inner([item(5), item(6)], { valid: true })],
        ]),
      );
    });

    it("keeps the last value of a duplicate key (§4.2.2)", () => {
      expect(parseDictionary("a=1, b=2, a=3")).toStrictEqual(
        new Map<string, SfMember>([
          ["a", item(3)],
          ["b", item(2)],
        ]),
      );
    });

    it.each([
      ["upper-case key", "A=1"],
      ["trailing comma", "a=1,"],
      ["key starting with a digit", "1a=1"],
      ["missing value after =", "a="],
    ])("fails on %s (§4.2.2)", (_name, input) => {
      expect(parseDictionary(input)).toBeUndefined();
    });
  });

  describe("serialization (§4.1)", () => {
    it("serializes the rate-limit policy item", () => {
      expect(serializeItem(item("name", { q: 100, w: 60 }))).toBe('"name";q=100;w=60');
    });

    it("serializes a Boolean true member and parameter as the key alone (§4.1.1.2, §4.1.2)", () => {
      const dict = parseDictionary("a=?0, b, c; foo=bar");
      expect(dict && serializeDictionary(dict)).toBe("a=?0, b, c;foo=bar");
      expect(serializeItem(item(1, { flag: true }))).toBe("1;flag");
    });

    it("serializes lists and inner lists in canonical form (§4.1.1)", () => {
      const list = parseList('("foo"; a=1;b=2);lvl=5, ("bar" "baz");lvl=1, ()');
      expect(list && serializeList(list)).toBe('("foo";a=1;b=2);lvl=5, ("bar" "baz");lvl=1, ()');
    });

    it.each<[number, string]>([
      [1.5, "1.5"],
      [0.1, "0.1"],
      [-0.25, "-0.25"],
      [1.0005, "1.0"], // the nearest double is just below 1.0005
      [0.0625, "0.062"], // a tie: round half to even (§4.1.5)
      [0.1875, "0.188"],
      [-0.0001, "0.0"],
      [999_999_999_999.999, "999999999999.999"],
    ])("rounds the Decimal %d to %s (§4.1.5)", (value, text) => {
      expect(serializeItem(item(value))).toBe(text);
    });

    it("serializes byte sequences with padding (§4.1.8)", () => {
      expect(serializeItem(item(bytes("pretend this is binary content.")))).toBe(
        ":cHJldGVuZCB0aGlzIGlzIGJpbmFyeSBjb250ZW50Lg==:",
      );
    });

    it("gives an empty string for an empty list or dictionary (§4.1: omit the field)", () => {
      expect(serializeList([])).toBe("");
      expect(serializeDictionary(new Map())).toBe("");
    });

    it.each<[string, SfItem]>([
      ["an Integer over 15 digits", item(1e15)],
      ["NaN", item(Number.NaN)],
      ["Infinity", item(Number.POSITIVE_INFINITY)],
      ["a Decimal over 12 integer digits", item(1e12 + 0.5)],
      ["a Decimal that rounds to 13 integer digits", item(999_999_999_999.9999)],
      ["a non-ASCII String", item("café")],
      ["a String with a newline", item("a\nb")],
      ["an invalid Token", item(t("1abc"))],
      ["an empty Token", item(t(""))],
      ["an upper-case parameter key", item(1, { Q: 1 })],
      ["an unsupported value", item({} as unknown as BareItem)],
    ])("throws a TypeError for %s", (_name, value) => {
      expect(() => serializeItem(value)).toThrow(TypeError);
    });

    it("throws a TypeError for an invalid dictionary key", () => {
      expect(() => serializeDictionary(new Map([["Key", item(1)]]))).toThrow(TypeError);
    });
  });

  describe("laws", () => {
    const key = fc.stringMatching(/^[a-z*][a-z0-9_\-.*]{0,6}$/);
    const bare: fc.Arbitrary<BareItem> = fc.oneof(
      fc.bigInt({ min: -999_999_999_999_999n, max: 999_999_999_999_999n }).map(Number),
      fc.bigInt({ min: -999_999_999_999_999n, max: 999_999_999_999_999n }).map((n) => Number(n) / 1000),
      fc.stringMatching(/^[\x20-\x7e]{0,12}$/),
      fc.boolean(),
      fc.stringMatching(/^[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]{0,8}$/).map(t),
      fc.uint8Array({ maxLength: 12 }),
    );
    const params = fc.array(fc.tuple(key, bare), { maxLength: 3 }).map((entries) => new Map<string, BareItem>(entries));
    const sfItem: fc.Arbitrary<SfItem> = fc.tuple(bare, params).map(([value, params]) => ({ value, params }));
    const member: fc.Arbitrary<SfMember> = fc.oneof(
      sfItem,
      fc.tuple(fc.array(sfItem, { maxLength: 3 }), params).map(([items, params]) => ({ items, params })),
    );

    it("parseItem(serializeItem(x)) equals x", () => {
      fc.assert(
        fc.property(sfItem, (x) => {
          expect(parseItem(serializeItem(x))).toStrictEqual(x);
        }),
      );
    });

    it("parseList(serializeList(x)) equals x", () => {
      fc.assert(
        fc.property(fc.array(member, { maxLength: 4 }), (x) => {
          expect(parseList(serializeList(x))).toStrictEqual(x);
        }),
      );
    });

    it("parseDictionary(serializeDictionary(x)) equals x", () => {
      const dict = fc.array(fc.tuple(key, member), { maxLength: 4 }).map((e) => new Map(e));
      fc.assert(
        fc.property(dict, (x) => {
          expect(parseDictionary(serializeDictionary(x))).toStrictEqual(x);
        }),
      );
    });

    const sfAlphabet = fc.string({ unit: fc.constantFrom(...'aZ*1-.:;=,()"\\?@% \t/+é\n'), maxLength: 30 });

    it("never throws on arbitrary input", () => {
      fc.assert(
        fc.property(fc.oneof(fc.string(), sfAlphabet), (input) => {
          parseItem(input);
          parseList(input);
          parseDictionary(input);
        }),
        { numRuns: 2000 },
      );
    });

    it("re-serializing what parses gives the same structure (canonical form is stable)", () => {
      fc.assert(
        fc.property(sfAlphabet, (input) => {
          const list = parseList(input);
          if (list) expect(parseList(serializeList(list))).toStrictEqual(list);
          const dict = parseDictionary(input);
          if (dict) expect(parseDictionary(serializeDictionary(dict))).toStrictEqual(dict);
        }),
        { numRuns: 2000 },
      );
    });
  });
});
