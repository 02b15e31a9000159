import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  formatQuotedString,
  formatTokenOrQuotedString,
  parseQuotedString,
  readQuotedString,
} from "../../src/http/quoted-string";
import { isToken } from "../../src/http/token";

describe("tokens (RFC 9110 §5.6.2)", () => {
  it.each(["GET", "gzip", "x-custom", "!#$%&'*+-.^_`|~09AZaz"])("accepts %j", (value) => {
    expect(isToken(value)).toBe(true);
  });
  it.each(["", "a b", "a,b", 'a"', "a/b", "a=b", "é", "a\t"])("refuses %j", (value) => {
    expect(isToken(value)).toBe(false);
  });
});

describe("quoted-string (RFC 9110 §5.6.4)", () => {
  it.each<[string, string]>([
    ['""', ""],
    ['"abc"', "abc"],
    ['"a,b;c=d"', "a,b;c=d"],
    ['"a \\"b\\""', 'a "b"'],
    ['"\\\\"', "\\"],
    // a quoted-pair may escape any VCHAR; the backslash is dropped
    ['"\\a"', "a"],
    ['"tab\there"', "tab\there"],
    ['"caf\u00e9"', "caf\u00e9"], // obs-text
  ])("parses %j", (input, value) => {
    expect(parseQuotedString(input)).toBe(value);
  });

  it.each([
    ["no quotes", "abc"],
    ["unterminated", '"abc'],
    ["trailing text", '"abc"x'],
    ["ends in a backslash", '"abc\\'],
    ["a control character", '"a\nb"'],
    ["DEL", '"a\x7fb"'],
    ["a quoted-pair of a control character", '"a\\\x00"'],
    ["a character above U+00FF", '"\u20ac"'],
  ])("refuses %s", (_name, input) => {
    expect(parseQuotedString(input)).toBeUndefined();
  });

  it("reads a quoted-string in the middle of a value and reports where it ends", () => {
    expect(readQuotedString('a="x\\"y"; b', 2)).toStrictEqual({ value: 'x"y', end: 8 });
    expect(readQuotedString("abc", 0)).toBeUndefined();
  });

  it("escapes only DQUOTE and backslash when formatting", () => {
    expect(formatQuotedString('say "hi" \\ bye')).toBe('"say \\"hi\\" \\\\ bye"');
    expect(formatQuotedString("a\tb")).toBe('"a\tb"');
  });

  it.each(["a\nb", "\x00", "\x7f", "\u20ac"])("refuses to format %j", (value) => {
    expect(() => formatQuotedString(value)).toThrow(TypeError);
  });

  it("formats a token bare and anything else quoted (§5.6.6)", () => {
    expect(formatTokenOrQuotedString("utf-8")).toBe("utf-8");
    expect(formatTokenOrQuotedString("a b")).toBe('"a b"');
    expect(formatTokenOrQuotedString("")).toBe('""');
  });

  const text = fc.string({
    unit: fc
      .integer({ min: 0, max: 0xff })
      .filter((c) => c === 9 || (c >= 0x20 && c !== 0x7f))
      .map((c) => String.fromCharCode(c)),
    maxLength: 20,
  });

  it("parseQuotedString(formatQuotedString(x)) equals x", () => {
    fc.assert(
      fc.property(text, (value) => {
        expect(parseQuotedString(formatQuotedString(value))).toBe(value);
      }),
    );
  });

  it("parseQuotedString never throws", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: fc.constantFrom(...'a"\\\n ') })), (input) => {
        parseQuotedString(input);
      }),
    );
  });
});
