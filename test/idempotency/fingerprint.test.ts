import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type FingerprintInput, requestFingerprint, scopedKey } from "../../src/idempotency";
import { legacyRequestFingerprint } from "../../src/idempotency/fingerprint";
import { FINGERPRINT_PREFIX, isLegacyFingerprint } from "../../src/idempotency/fingerprint-form";

const enc = (s: string) => new TextEncoder().encode(s);
const base: FingerprintInput = {
  method: "POST",
  target: "/orders",
  caller: "acct_1",
  body: enc('{"n":1}'),
  contentType: "application/json",
};

// 0.1's fingerprint, written out: what records already in stores hold.
function naiveLegacy(input: FingerprintInput): string {
  const parts = [enc(input.method), enc(input.target), enc(input.caller), input.body];
  const hash = createHash("sha256");
  for (const part of parts) hash.update(`${part.byteLength}:`).update(part);
  return hash.digest("base64url");
}

const input = fc.record({
  method: fc.string({ maxLength: 4 }),
  target: fc.string({ maxLength: 4 }),
  caller: fc.string({ maxLength: 4 }),
  body: fc.string({ maxLength: 4 }).map(enc),
  contentType: fc.option(fc.string({ maxLength: 4 }), { nil: undefined }),
  contentEncoding: fc.option(fc.string({ maxLength: 4 }), { nil: undefined }),
});

describe("requestFingerprint", () => {
  it('is "v2." and a base64url SHA-256, and stable', () => {
    expect(requestFingerprint(base)).toMatch(/^v2\.[A-Za-z0-9_-]{43}$/);
    expect(requestFingerprint({ ...base, body: enc('{"n":1}') })).toBe(requestFingerprint(base));
  });

  // Pinned: records in stores hold these values, so a change of format must be a new version, never a silent one.
  it("keeps its byte format", () => {
    expect(requestFingerprint(base)).toBe("v2.cVc744qkpF6H_r2gucnPiSYUqAgULxegQd8rZlNeUVs");
    expect(requestFingerprint({ ...base, contentType: undefined })).toBe(
      "v2.uq88VcbIyBoj5DKxjUBMuf0a7R4TR_dcePAbpL6nKN8",
    );
  });

  it.each([
    ["method", { method: "PATCH" }],
    ["target", { target: "/orders/1" }],
    ["query", { target: "/orders?expand=items" }],
    ["caller", { caller: "acct_2" }],
    ["body", { body: enc('{"n":2}') }],
    ["body key order", { body: enc('{ "n":1}') }],
    ["Content-Type", { contentType: "text/plain" }],
    ["Content-Type parameters", { contentType: "application/json; charset=utf-8" }],
    ["Content-Type spelling (not normalised)", { contentType: "Application/JSON" }],
    ["Content-Type removed", { contentType: undefined }],
    ["Content-Encoding", { contentEncoding: "gzip" }],
  ])("changes with the %s", (_, change) => {
    expect(requestFingerprint({ ...base, ...change })).not.toBe(requestFingerprint(base));
  });

  // RFC 9110 §8.3: a request without Content-Type leaves the recipient to guess; "Content-Type:" (empty) is another
  // field line, which a handler may refuse differently.
  it("tells an absent field from an empty one", () => {
    expect(requestFingerprint({ ...base, contentType: undefined })).not.toBe(
      requestFingerprint({ ...base, contentType: "" }),
    );
    expect(requestFingerprint({ ...base, contentEncoding: undefined })).not.toBe(
      requestFingerprint({ ...base, contentEncoding: "" }),
    );
    // A field's bytes never pass for the other's.
    expect(requestFingerprint({ ...base, contentType: undefined, contentEncoding: "gzip" })).not.toBe(
      requestFingerprint({ ...base, contentType: "gzip", contentEncoding: undefined }),
    );
  });

  it("changes when any one of method, target, caller, body, Content-Type or Content-Encoding changes", () => {
    const part = fc.constantFrom("method", "target", "caller", "body", "contentType", "contentEncoding");
    const other = fc.option(fc.string({ maxLength: 6 }), { nil: undefined });
    fc.assert(
      fc.property(input, part, other, (a, name, value) => {
        const b: FingerprintInput =
          name === "body"
            ? { ...a, body: enc(value ?? "") }
            : name === "contentType" || name === "contentEncoding"
              ? { ...a, [name]: value }
              : { ...a, [name]: value ?? "" };
        const same = name === "body" ? Buffer.from(a.body).equals(Buffer.from(b.body)) : Object.is(a[name], b[name]);
        expect(requestFingerprint(a) === requestFingerprint(b)).toBe(same);
      }),
    );
  });

  it("cannot be confused by moving bytes between fields (length-prefixed, absent marked)", () => {
    fc.assert(
      fc.property(input, input, (a, b) => {
        const same =
          a.method === b.method &&
          a.target === b.target &&
          a.caller === b.caller &&
          Buffer.from(a.body).equals(Buffer.from(b.body)) &&
          a.contentType === b.contentType &&
          a.contentEncoding === b.contentEncoding;
        expect(requestFingerprint(a) === requestFingerprint(b)).toBe(same);
      }),
    );
  });
});

describe("requestFingerprint of a caller with a lone surrogate", () => {
  it("tells it from the caller with U+FFFD in its place", () => {
    expect(requestFingerprint({ ...base, caller: "a\uD800" })).not.toBe(
      requestFingerprint({ ...base, caller: "a\uFFFD" }),
    );
  });

  it("keeps the byte format of well-formed callers, non-ASCII ones included", () => {
    const caller = "café \u{1F600}";
    const utf8 = enc(caller);
    const hash = createHash("sha256");
    for (const part of [enc(base.method), enc(base.target), utf8, base.body])
      hash.update(`${part.byteLength}:`).update(part);
    hash.update(`${enc("application/json").byteLength}:application/json-`);
    expect(requestFingerprint({ ...base, caller })).toBe(`${FINGERPRINT_PREFIX}${hash.digest("base64url")}`);
  });
});

describe("legacyRequestFingerprint (the form 0.1 stored)", () => {
  it("is 0.1's SHA-256 of method, target, caller and body, without the fields", () => {
    expect(legacyRequestFingerprint(base)).toBe("CHJE_vEwGiwN5YbwTr-HdRi5tMI6J0JKnbzo-4F5gwg");
    fc.assert(
      fc.property(input, (a) => {
        expect(legacyRequestFingerprint(a)).toBe(naiveLegacy(a));
      }),
    );
  });

  it("is told apart from the current form by its shape alone", () => {
    fc.assert(
      fc.property(input, (a) => {
        const current = requestFingerprint(a);
        const legacy = legacyRequestFingerprint(a);
        expect(current.startsWith(FINGERPRINT_PREFIX)).toBe(true);
        expect(isLegacyFingerprint(legacy)).toBe(true);
        expect(isLegacyFingerprint(current)).toBe(false);
      }),
    );
    expect(isLegacyFingerprint("fp-1")).toBe(false);
  });
});

describe("scopedKey", () => {
  it("separates callers: the same key of two callers files under two store keys", () => {
    expect(scopedKey("acct_1", "k")).not.toBe(scopedKey("acct_2", "k"));
    expect(scopedKey("ab", "c")).not.toBe(scopedKey("a", "bc"));
    expect(scopedKey("acct_1", "k")).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  // UTF-8 cannot encode a lone surrogate: Buffer.from wrote U+FFFD for it, so "a\uD800" and "a\uFFFD" (or "a\uDC00")
  // filed under one store key and one caller was replayed the other's response.
  it("separates callers whose identities differ only by a lone surrogate", () => {
    const callers = ["a\uD800", "a\uDC00", "a\uFFFD", "a\uD800\uDC00"];
    const keys = new Set(callers.map((caller) => scopedKey(caller, "k")));
    expect(keys.size).toBe(callers.length);
    for (const key of keys) expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("tells any two callers apart, lone surrogates included", () => {
    // Units where UTF-8 would blur the difference: lone surrogates, U+FFFD, and a surrogate pair split or whole.
    const units = fc.constantFrom("a", "\uD83D", "\uDE00", "\uFFFD", "\u{1F600}");
    const part = fc.string({ unit: units, maxLength: 3 });
    fc.assert(
      fc.property(part, part, part, (caller, other, key) => {
        expect(scopedKey(caller, key) === scopedKey(other, key)).toBe(caller === other);
      }),
    );
  });
});
