import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodeExisting,
  encodeCompleted,
  encodeInProgress,
  leaseToken,
  NONCE_LENGTH,
} from "../../src/idempotency/redis/record-codec";

const NOW = 1_800_000_000_000;

const fingerprint = fc.string({ unit: "grapheme", maxLength: 64 });
// Header names as a stored response holds them: lower-case field-name tokens (RFC 9110 §5.1), taken from the
// response by `toStoredResponse` into a plain object, where `__proto__` can never become an own key (fast-check
// found it here: the codec, like that object, drops it).
const headerName = fc.stringMatching(/^[a-z0-9!#$%&'*+.^_`|~-]{1,16}$/).filter((name) => name !== "__proto__");
const headers = fc.dictionary(
  headerName,
  fc.oneof(fc.string({ unit: "grapheme" }), fc.array(fc.string({ unit: "grapheme" }), { maxLength: 3 })),
  { maxKeys: 4 },
);
const response = fc.record({
  status: fc.integer({ min: 100, max: 599 }),
  headers,
  body: fc.uint8Array({ maxLength: 4096 }),
});

describe("Redis record codec", () => {
  describe("round-trips", () => {
    it("a completed record decodes to the fingerprint and response it was encoded from", () => {
      fc.assert(
        fc.property(fingerprint, response, fc.integer({ min: 1, max: 86_400_000 }), (fp, res, leaseMs) => {
          const token = leaseToken(fp, leaseMs, NOW, "0123456789abcdef");
          const found = decodeExisting(encodeCompleted(token, res), { now: NOW, leaseMs });
          expect(found.kind).toBe("completed");
          if (found.kind !== "completed") return;
          expect(found.fingerprint).toBe(fp);
          expect(found.response.status).toBe(res.status);
          expect(found.response.headers).toEqual(res.headers);
          expect(Buffer.from(found.response.body).equals(Buffer.from(res.body))).toBe(true);
        }),
      );
    });

    it("a lease decodes to its fingerprint and the lease left, never more than the lease", () => {
      fc.assert(
        fc.property(
          fingerprint,
          fc.integer({ min: 1, max: 86_400_000 }),
          fc.integer({ min: 0, max: 100_000_000 }),
          (fp, leaseMs, elapsed) => {
            const token = leaseToken(fp, leaseMs, NOW, "0123456789abcdef");
            expect(token.length - fp.length).toBe(NONCE_LENGTH);
            const value = Buffer.from(encodeInProgress(token), "utf8");
            const found = decodeExisting(value, { now: NOW + elapsed, leaseMs });
            expect(found).toEqual({
              kind: "in-progress",
              fingerprint: fp,
              retryAfterMs: Math.max(0, leaseMs - elapsed),
            });
          },
        ),
      );
    });
  });

  describe("UTF-8", () => {
    const cases: { name: string; body: string }[] = [
      { name: "a byte order mark, kept as bytes", body: '\uFEFF{"a":1}' },
      { name: "multibyte characters (2, 3 and 4 bytes)", body: "é€😀 ✓" },
      { name: "a large body of multibyte characters", body: "€😀".repeat(20_000) },
    ];
    for (const { name, body } of cases) {
      it(`keeps a body with ${name} byte for byte`, () => {
        const bytes = new TextEncoder().encode(body);
        const token = leaseToken("fp-é😀", 1000, NOW, "0123456789abcdef");
        const found = decodeExisting(encodeCompleted(token, { status: 200, headers: { "x-é": "😀" }, body: bytes }), {
          now: NOW,
          leaseMs: 1000,
        });
        expect(found.kind === "completed" && Buffer.from(found.response.body).equals(Buffer.from(bytes))).toBe(true);
        expect(found.kind === "completed" && found.fingerprint).toBe("fp-é😀");
      });
    }
  });
});
