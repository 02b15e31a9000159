import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type FingerprintInput, requestFingerprint, scopedKey } from "../../src/idempotency";

const enc = (s: string) => new TextEncoder().encode(s);
const base: FingerprintInput = { method: "POST", target: "/orders", caller: "acct_1", body: enc('{"n":1}') };

describe("requestFingerprint", () => {
  it("is a base64url SHA-256 and stable", () => {
    expect(requestFingerprint(base)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(requestFingerprint({ ...base, body: enc('{"n":1}') })).toBe(requestFingerprint(base));
  });

  it.each([
    ["method", { method: "PATCH" }],
    ["target", { target: "/orders/1" }],
    ["query", { target: "/orders?expand=items" }],
    ["caller", { caller: "acct_2" }],
    ["body", { body: enc('{"n":2}') }],
    ["body key order", { body: enc('{ "n":1}') }],
  ])("changes with the %s", (_, change) => {
    expect(requestFingerprint({ ...base, ...change })).not.toBe(requestFingerprint(base));
  });

  it("cannot be confused by moving bytes between fields (length-prefixed)", () => {
    const input = fc.record({
      method: fc.string({ maxLength: 4 }),
      target: fc.string({ maxLength: 4 }),
      caller: fc.string({ maxLength: 4 }),
      body: fc.string({ maxLength: 4 }).map(enc),
    });
    fc.assert(
      fc.property(input, input, (a, b) => {
        const same =
          a.method === b.method &&
          a.target === b.target &&
          a.caller === b.caller &&
          Buffer.from(a.body).equals(Buffer.from(b.body));
        expect(requestFingerprint(a) === requestFingerprint(b)).toBe(same);
      }),
    );
  });
});

describe("scopedKey", () => {
  it("separates callers: the same key of two callers files under two store keys", () => {
    expect(scopedKey("acct_1", "k")).not.toBe(scopedKey("acct_2", "k"));
    expect(scopedKey("ab", "c")).not.toBe(scopedKey("a", "bc"));
    expect(scopedKey("acct_1", "k")).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});
