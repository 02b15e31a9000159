import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatMediaType, isJsonMediaType, parseMediaType } from "../../src/http/media-type";

describe("media types (RFC 9110 §8.3.1)", () => {
  it("parses type, subtype, suffix and parameters, lower-casing the case-insensitive parts", () => {
    expect(parseMediaType('Application/Problem+JSON; Charset=UTF-8; profile="a b"')).toStrictEqual({
      type: "application",
      subtype: "problem+json",
      suffix: "json",
      parameters: { charset: "UTF-8", profile: "a b" },
    });
  });

  it.each([
    ["text/plain", {}],
    ["text/plain;", {}],
    ["text/plain ; charset=utf-8", { charset: "utf-8" }],
    ["text/plain;charset=utf-8 ;; format=flowed", { charset: "utf-8", format: "flowed" }],
    ['text/plain; a="x;y=\\"z\\""', { a: 'x;y="z"' }],
    // §8.3.1 leaves duplicates undefined: the first wins
    ["text/plain; a=1; a=2", { a: "1" }],
    // OWS (SP, HTAB) around the type and before ";" (§5.6.3)
    [" \ttext/plain\t ", {}],
    ["text/plain; a=1\t ; b=2 \t", { a: "1", b: "2" }],
  ])("parses the parameters of %j", (input, parameters) => {
    expect(parseMediaType(input)?.parameters).toStrictEqual(parameters);
  });

  it("keeps a parameter named __proto__ as a plain member", () => {
    const media = parseMediaType("text/plain; __proto__=x");
    expect(Object.getPrototypeOf(media?.parameters)).toBe(Object.prototype);
    expect(Object.hasOwn(media?.parameters ?? {}, "__proto__")).toBe(true);
  });

  it.each([
    ["no subtype", "text"],
    ["empty type", "/plain"],
    ["space in subtype", "text/pl ain"],
    ["parameter without value", "text/plain; charset"],
    ["empty parameter value", "text/plain; charset="],
    ["space around =", "text/plain; charset = utf-8"],
    ["unterminated quoted value", 'text/plain; a="x'],
    ["text after a quoted value", 'text/plain; a="x"y'],
    // §8.3.1: only OWS (SP, HTAB) may surround; String.prototype.trim once stripped these too.
    ["NBSP after the subtype", "application/json\u00a0"],
    ["U+FEFF before the type", "\ufeffapplication/json"],
    ["VT before the parameters", "application/json\v; charset=utf-8"],
    ["NBSP after a parameter value", "application/json; charset=utf-8\u00a0"],
    ["NBSP after a parameter value, before ;", "text/plain; a=1\u00a0; b=2"],
  ])("refuses %s", (_name, input) => {
    expect(parseMediaType(input)).toBeUndefined();
  });

  it.each([
    ["application/json", true],
    ["application/merge-patch+json", true],
    ["application/problem+json; charset=utf-8", true],
    ["text/json", false],
    ["application/jsonx", false],
  ])("isJsonMediaType(%j) is %s (RFC 6839 §3.1)", (input, expected) => {
    expect(isJsonMediaType(parseMediaType(input))).toBe(expected);
  });

  it("formats with '; ' and quotes values that are not tokens (§5.6.6)", () => {
    expect(formatMediaType({ type: "Text", subtype: "Plain", parameters: { Charset: "utf-8", b: "x y" } })).toBe(
      'text/plain; charset=utf-8; b="x y"',
    );
    expect(formatMediaType({ type: "application", subtype: "json" })).toBe("application/json");
  });

  it.each([
    [{ type: "te xt", subtype: "plain" }],
    [{ type: "text", subtype: "" }],
    [{ type: "text", subtype: "plain", parameters: { "a b": "x" } }],
    [{ type: "text", subtype: "plain", parameters: { a: "\n" } }],
  ])("refuses to format %j", (media) => {
    expect(() => formatMediaType(media)).toThrow(TypeError);
  });

  const token = fc.stringMatching(/^[!#$%&'*+\-.^_`|~0-9a-z]{1,8}$/);
  const media = fc.record({
    type: token,
    subtype: token,
    parameters: fc.dictionary(token, fc.stringMatching(/^[\x20-\x7e]{0,8}$/), { maxKeys: 3 }),
  });

  it("parseMediaType(formatMediaType(x)) gives x back", () => {
    fc.assert(
      fc.property(media, (m) => {
        const parsed = parseMediaType(formatMediaType(m));
        expect(parsed?.type).toBe(m.type);
        expect(parsed?.subtype).toBe(m.subtype);
        expect({ ...parsed?.parameters }).toStrictEqual({ ...m.parameters });
      }),
    );
  });

  it("parseMediaType never throws", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: fc.constantFrom(...'a/;=" \\+') })), (input) => {
        parseMediaType(input);
      }),
    );
  });
});
