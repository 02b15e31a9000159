import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { item, serializeItem } from "../../src/http";
import { MAX_KEY_LENGTH, parseIdempotencyKey } from "../../src/idempotency";

type Case = [field: string, lenient: string | undefined, strict: string | undefined];

// draft-ietf-httpapi-idempotency-key-header §2.1: Idempotency-Key = sf-string.
const cases: Case[] = [
  ['"8e03978e-40d5"', "8e03978e-40d5", "8e03978e-40d5"],
  ['  "k-1"  ', "k-1", "k-1"],
  ['"k-1";v=2', "k-1", "k-1"],
  ['"with space"', "with space", "with space"],
  ['"quote\\"d"', 'quote"d', 'quote"d'],
  ["8e03978e-40d5-43e8-bc93-6894a57f9324", "8e03978e-40d5-43e8-bc93-6894a57f9324", undefined],
  ["abc", "abc", undefined],
  ["key_with.dots:and/slashes+=", "key_with.dots:and/slashes+=", undefined],
  ['""', undefined, undefined],
  ["", undefined, undefined],
  ["   ", undefined, undefined],
  ['"unterminated', undefined, undefined],
  ['"a", "b"', undefined, undefined],
  ["a, b", undefined, undefined],
  ["two words", undefined, undefined],
  ['"tab\there"', undefined, undefined],
  ['"caf\u00e9"', undefined, undefined],
  ["caf\u00e9", undefined, undefined],
  ["42", "42", undefined],
  [`"${"x".repeat(MAX_KEY_LENGTH)}"`, "x".repeat(MAX_KEY_LENGTH), "x".repeat(MAX_KEY_LENGTH)],
  [`"${"x".repeat(MAX_KEY_LENGTH + 1)}"`, undefined, undefined],
  ["x".repeat(MAX_KEY_LENGTH + 1), undefined, undefined],
  // RFC 9110 §5.6.3: only OWS (SP, HTAB) is trimmed; other characters String.prototype.trim takes (NBSP, VT, U+FEFF,
  // U+2028) make the value malformed, never the key inside them.
  ['\t"k-1"\t', "k-1", "k-1"],
  ["\tabc ", "abc", undefined],
  ["\u00a0abc", undefined, undefined],
  ["abc\u00a0", undefined, undefined],
  ["\u000babc", undefined, undefined],
  ["abc\u000c", undefined, undefined],
  ["\ufeffabc", undefined, undefined],
  ["abc\u2028", undefined, undefined],
  ['\u00a0"k-1"', undefined, undefined],
];

describe("parseIdempotencyKey", () => {
  describe.each(cases)("%j", (field, lenient, strict) => {
    it(`lenient: ${lenient === undefined ? "rejects" : "accepts"}`, () => {
      const result = parseIdempotencyKey(field);
      expect(result.ok ? result.key : undefined).toBe(lenient);
    });
    it(`strict: ${strict === undefined ? "rejects" : "accepts"}`, () => {
      const result = parseIdempotencyKey(field, { strict: true });
      expect(result.ok ? result.key : undefined).toBe(strict);
    });
  });

  const sfStringChars = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) });

  it("reads back every sf-string our serializer writes, in both modes", () => {
    fc.assert(
      fc.property(
        sfStringChars.filter((s) => s.length >= 1 && s.length <= MAX_KEY_LENGTH),
        (key) => {
          const field = serializeItem(item(key));
          expect(parseIdempotencyKey(field)).toEqual({ ok: true, key });
          expect(parseIdempotencyKey(field, { strict: true })).toEqual({ ok: true, key });
        },
      ),
    );
  });

  // JavaScript's whitespace (String.prototype.trim) that is not OWS: a latin1-decoded 0xA0 byte (node:http), VT and FF
  // (a Fetch Headers value may hold them), and the Unicode spaces and line separators.
  const notOws = fc.constantFrom("\u00a0", "\u000b", "\u000c", "\ufeff", "\u2028", "\u2029", "\u3000", "\u1680");
  const ows = fc.stringMatching(/^[ \t]{0,3}$/);

  it("reads the same key whatever OWS surrounds the field value, and none from a value wrapped in other spaces", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.stringMatching(/^[\x21\x23-\x2b\x2d-\x7e]{1,20}$/),
          sfStringChars.filter((s) => s.length >= 1 && s.length <= 20).map((s) => serializeItem(item(s))),
        ),
        ows,
        ows,
        notOws,
        fc.boolean(),
        fc.boolean(),
        (field, before, after, space, lead, strict) => {
          expect(parseIdempotencyKey(before + field + after, { strict })).toEqual(
            parseIdempotencyKey(field, { strict }),
          );
          const wrapped = lead ? space + field : field + space;
          expect(parseIdempotencyKey(wrapped, { strict }).ok).toBe(false);
        },
      ),
    );
  });

  it("never accepts a key longer than the limit or an empty one, whatever the input", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 300 }),
          sfStringChars.map((s) => `"${s}"`),
        ),
        (field) => {
          const result = parseIdempotencyKey(field);
          if (result.ok) {
            expect(result.key.length).toBeGreaterThan(0);
            expect(result.key.length).toBeLessThanOrEqual(MAX_KEY_LENGTH);
          } else expect(result.reason.length).toBeGreaterThan(0);
        },
      ),
    );
  });
});
