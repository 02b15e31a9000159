import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { KeyCache } from "../../../src/webhooks/signing/secrets";

describe("KeyCache", () => {
  it("decodes a secret once while it is among the last `limit` secrets decoded, and again once it has left", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), fc.array(fc.nat(8), { maxLength: 100 }), (limit, uses) => {
        const cache = new KeyCache<string>(limit);
        // The reference: the secrets decoded, oldest first, at most `limit` of them.
        const kept: string[] = [];
        for (const use of uses) {
          const secret = `s${use}`;
          let decoded = false;
          const value = cache.get(secret, (s) => {
            decoded = true;
            return `key of ${s}`;
          });
          expect(value).toBe(`key of ${secret}`);
          expect(decoded, secret).toBe(!kept.includes(secret));
          if (decoded) {
            kept.push(secret);
            if (kept.length > limit) kept.shift();
          }
        }
      }),
    );
  });
});
