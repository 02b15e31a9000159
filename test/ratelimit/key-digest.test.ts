import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { keyDigest } from "../../src/ratelimit/memory/key-digest";

const sha256 = (key: string) => `\udc00${createHash("sha256").update(key, "utf8").digest("hex").slice(0, 32)}`;

// Regression: the digest was an unanalysed multiply-rotate hash with public constants, whose every step inverts; with
// keys guessable (an address, an id in a path), a crafted long key with a victim's digest spent the victim's allowance.
describe("keyDigest: SHA-256 of the key's UTF-8, its first 128 bits", () => {
  it.each([
    ["empty", ""],
    ["FIPS 180-4 'abc'", "abc"],
    ["55 bytes (the last one-block message)", "a".repeat(55)],
    ["56 bytes (the length spills into a second block)", "a".repeat(56)],
    ["64 bytes", "a".repeat(64)],
    ["16 KB", "k".repeat(16_384)],
    ["non-ASCII, surrogate pairs", "clé-\u{1F600}-\u4e2d".repeat(40)],
  ])("agrees with node:crypto: %s", (_case, key) => {
    expect(keyDigest(key)).toBe(sha256(key));
  });

  it("agrees with node:crypto on random keys of any length", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 300 }), (key) => {
        expect(keyDigest(key)).toBe(sha256(key));
      }),
      { numRuns: 500 },
    );
  });

  it("is 33 characters, opened by a lone low surrogate", () => {
    const digest = keyDigest("x".repeat(1_000));
    expect(digest).toHaveLength(33);
    expect(digest.charCodeAt(0)).toBe(0xdc00);
  });
});
