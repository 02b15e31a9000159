import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseJsonText, safeFormBody, safeJsonBody } from "../../src/http/body";
import { DEFAULT_JSON_MAX_DEPTH, findStringFault, nestsDeeperThan, scanJsonText } from "../../src/http/json-limits";

const encoder = new TextEncoder();
const jsonRequest = (text: string) => ({ headers: { "content-type": "application/json" }, body: encoder.encode(text) });
const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

/** Depth by building the value: the reference the scan must agree with. */
function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (value !== null && typeof value === "object") return 1 + Math.max(0, ...Object.values(value).map(depthOf));
  return 0;
}

describe("JSON nesting limit (checked before parsing)", () => {
  it("accepts 64 levels and refuses 65 with 400 json_too_deep", () => {
    expect(DEFAULT_JSON_MAX_DEPTH).toBe(64);
    expect(parseJsonText(nested(64)).ok).toBe(true);
    const refused = parseJsonText(nested(65));
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.problem).toMatchObject({ status: 400, code: "json_too_deep" });
  });

  it("refuses 50,000 levels of arrays and objects without a RangeError", () => {
    for (const text of [nested(50_000), `${'{"a":'.repeat(50_000)}1${"}".repeat(50_000)}`]) {
      const read = safeJsonBody(jsonRequest(text));
      expect(read.ok).toBe(false);
      if (!read.ok) expect(read.problem.code).toBe("json_too_deep");
    }
  });

  it("takes its limit from the options", () => {
    expect(parseJsonText(nested(3), { maxDepth: 2 }).ok).toBe(false);
    expect(parseJsonText(nested(100), { maxDepth: 100 }).ok).toBe(true);
  });

  it("does not count brackets inside strings, escaped quotes included", () => {
    expect(scanJsonText('["[[[[", "\\"[[[", {"{{": "}}"}]', 2)).toStrictEqual({
      tooDeep: false,
      unicodeEscape: false,
      members: 1,
    });
  });

  it("agrees with the depth of the parsed value (fast-check)", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 8 }), (value, max) => {
        const text = JSON.stringify(value);
        expect(scanJsonText(text, max).tooDeep).toBe(depthOf(value) > max);
      }),
    );
  });

  it("walks a parsed value to the same answer as the scan of its text (fast-check)", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 8 }), (value, max) => {
        expect(nestsDeeperThan(value, max)).toBe(scanJsonText(JSON.stringify(value), max).tooDeep);
      }),
    );
  });

  it("walks 100,000 levels without a RangeError", () => {
    expect(nestsDeeperThan(JSON.parse(nested(100_000)), DEFAULT_JSON_MAX_DEPTH)).toBe(true);
    expect(nestsDeeperThan(JSON.parse(nested(64)), DEFAULT_JSON_MAX_DEPTH)).toBe(false);
  });
});

describe("I-JSON strings (RFC 7493 §2.1) and NUL", () => {
  it.each([
    ['{"name":"x\\ud800"}', "/name", "lone_surrogate"],
    ['{"name":"\\udc00x"}', "/name", "lone_surrogate"],
    ['["ok",["\\udc00\\ud800"]]', "/1/0", "lone_surrogate"],
    ['{"items":[{"sku":"A\\u0000"}]}', "/items/0/sku", "nul_character"],
    ['{"a/b~c":{"\\u0000":1}}', "/a~1b~0c/\u0000", "nul_character"],
    ['"\\ud800"', "", "lone_surrogate"],
  ])("%s → 422 invalid_string at %s (%s)", (text, pointer, fault) => {
    const read = parseJsonText(text);
    expect(read.ok).toBe(false);
    if (read.ok) return;
    expect(read.problem).toMatchObject({ status: 422, code: "invalid_string" });
    expect(read.problem.extensions).toStrictEqual({
      errors: [{ pointer, in: "body", code: fault, message: expect.any(String) }],
    });
  });

  it("keeps surrogate pairs, escaped or not, and other escapes", () => {
    expect(parseJsonText('{"a":"\\ud83d\\ude00","b":"😀","c":"\\u00e9\\n"}')).toStrictEqual({
      ok: true,
      value: { a: "😀", b: "😀", c: "é\n" },
    });
  });

  it("regression: refuses a lone surrogate the text holds as a character, not as a \\u escape (text cut mid-pair)", () => {
    const cut = '{"name":"x😀"}'.slice(0, 11); // {"name":"x and the high half of the pair
    for (const [text, pointer] of [
      [`${cut}"}`, "/name"],
      ['{"a":["\udc00"]}', "/a/0"],
      ['{"\ud800":1}', "/\ud800"],
    ] as const) {
      const read = parseJsonText(text);
      expect(read.ok ? undefined : read.problem.code, JSON.stringify(text)).toBe("invalid_string");
      expect(read.ok ? undefined : read.problem.extensions.errors).toMatchObject([{ pointer, code: "lone_surrogate" }]);
    }
  });

  it("accepts NUL only when asked to", () => {
    expect(parseJsonText('{"a":"x\\u0000"}', { allowNul: true })).toStrictEqual({ ok: true, value: { a: "x\u0000" } });
    expect(parseJsonText('{"a":"x\\ud800"}', { allowNul: true }).ok).toBe(false);
  });

  it("refuses a NUL in a form field or name, however it is sent", () => {
    const form = (text: string) => ({
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: encoder.encode(text),
    });
    for (const text of ["description=%00", "a=1&n%00=2", "description=x\u0000"]) {
      const read = safeFormBody(form(text));
      expect(read.ok, text).toBe(false);
      if (!read.ok) expect(read.problem).toMatchObject({ status: 422, code: "invalid_string" });
    }
    expect(safeFormBody(form("description=%00"), { allowNul: true }).ok).toBe(true);
  });

  it("finds a refused string in any value, every code unit tried (fast-check)", () => {
    const unit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 6 }), (text) => {
        const wellFormed = !/\p{Cs}/u.test(text);
        const expected = !wellFormed ? "lone_surrogate" : text.includes("\u0000") ? "nul_character" : undefined;
        expect(findStringFault({ list: [text] }, false)?.fault).toBe(expected);
        expect(findStringFault({ [text]: 1 }, false)?.fault).toBe(expected);
        // Through the body reader too: JSON.stringify escapes lone surrogates, so the text is well-formed UTF-8.
        const read = parseJsonText(JSON.stringify({ list: [text] }));
        expect(read.ok ? undefined : read.problem.code).toBe(expected === undefined ? undefined : "invalid_string");
      }),
    );
  });
});
