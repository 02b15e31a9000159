import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { utf8Length } from "../../src/http/utf8-length";

const encoder = new TextEncoder();
// Any UTF-16 code unit, lone surrogates included: what a JavaScript string may hold.
const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit));

describe("utf8Length", () => {
  it("counts each range of code points", () => {
    expect(utf8Length("")).toBe(0);
    expect(utf8Length("order.created")).toBe(13);
    expect(utf8Length("é")).toBe(2);
    expect(utf8Length("注文")).toBe(6);
    expect(utf8Length("😀")).toBe(4);
    // A lone surrogate is written as U+FFFD, 3 bytes; a high one at the end too.
    expect(utf8Length("a\ud800b")).toBe(5);
    expect(utf8Length("a\ud800")).toBe(4);
    expect(utf8Length("\udc00\ud800")).toBe(6);
  });

  it("agrees with TextEncoder on any string", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: "binary" }), fc.string({ unit: anyUnit })), (text) => {
        expect(utf8Length(text)).toBe(encoder.encode(text).byteLength);
      }),
      { numRuns: 2_000 },
    );
  });
});
