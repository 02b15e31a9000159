import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { etagFromBody, etagFromTime, etagFromVersion, parseEntityTag, strongCompare } from "../../src/caching/index";
import { expectCode } from "./expect-code";

describe("etagFromBody", () => {
  it("is the base64url SHA-1 of the bytes, quoted", () => {
    expect(etagFromBody("")).toBe('"2jmj7l5rSw0yVb_vlWAYkK_YBwk"');
    const bytes = new TextEncoder().encode("hello");
    expect(etagFromBody(bytes)).toBe(`"${createHash("sha1").update(bytes).digest("base64url")}"`);
  });

  it("hashes strings as UTF-8, so a string and its bytes agree", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme" }),
        (text) => etagFromBody(text) === etagFromBody(new TextEncoder().encode(text)),
      ),
      { numRuns: 300 },
    );
  });

  it("is a valid strong entity-tag, stable for the same bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), (bytes) => {
        const tag = etagFromBody(bytes);
        expect(parseEntityTag(tag)).toEqual({ weak: false, tag: tag.slice(1, -1) });
        expect(etagFromBody(Uint8Array.from(bytes))).toBe(tag);
      }),
      { numRuns: 300 },
    );
  });

  it("changes when any byte changes", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 512 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (bytes, at, delta) => {
          const altered = Uint8Array.from(bytes);
          const i = at % altered.length;
          altered[i] = ((altered[i] ?? 0) + delta) & 0xff;
          return !strongCompare(etagFromBody(bytes), etagFromBody(altered));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("can be weak", () => {
    expect(etagFromBody("x", { weak: true })).toMatch(/^W\/"[A-Za-z0-9_-]{27}"$/);
  });
});

describe("etagFromVersion / etagFromTime", () => {
  it("makes weak tags by default, strong on request", () => {
    expect(etagFromVersion(42)).toBe('W/"42"');
    expect(etagFromVersion(42n)).toBe('W/"42"');
    expect(etagFromVersion("rev-7", { weak: false })).toBe('"rev-7"');
    expect(etagFromTime(new Date("2024-01-01T00:00:00Z"))).toBe('W/"lqu5m2o0"');
    expect(etagFromTime(1_704_067_200_000, { weak: false })).toBe('"lqu5m2o0"');
  });

  it("distinguishes millisecond-apart times that Last-Modified cannot", () => {
    expect(etagFromTime(1_704_067_200_000)).not.toBe(etagFromTime(1_704_067_200_001));
  });

  it("refuses versions that cannot be tags", () => {
    expectCode(() => etagFromVersion(1.5), "invalid_version");
    expectCode(() => etagFromVersion(Number.NaN), "invalid_version");
    expectCode(() => etagFromVersion('a"b'), "invalid_version");
    expectCode(() => etagFromTime(new Date("nope")), "invalid_date");
  });

  // Regression: a version of another type (a missing column read as undefined, null) became the tag W/"undefined",
  // the same for every version, so If-None-Match answered 304 to stale copies.
  it("refuses a version that is neither a number, a bigint nor a string, naming it", () => {
    for (const version of [undefined, null, true, {}, [1]]) {
      expectCode(() => etagFromVersion(version as unknown as number), "invalid_version");
      expect(() => etagFromVersion(version as unknown as number)).toThrow(/^etagFromVersion: version must be /);
    }
    expect(etagFromVersion(10n)).toBe('W/"10"');
  });
});
