import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  signWith,
  VERIFICATION_ERROR_CODES,
  type VerifyResult,
  verify,
  WebhookVerificationError,
} from "../../../src/webhooks/signing/index";
import { caseName, keyPairs, type SchemeCase, schemeCases } from "./scheme-cases";

const NOW = 1_700_000_000;
const clock = () => NOW * 1000;
const runs = { numRuns: 60 };

/** Message ids as Standard Webhooks allows them: visible, without '.'. */
const id = fc.string({ minLength: 1, maxLength: 40, unit: "grapheme-ascii" }).filter((text) => !/[.\s]/.test(text));
/** Bodies of any bytes, including sequences that are not UTF-8, and text of any characters. */
const body = fc.oneof(fc.uint8Array({ maxLength: 512 }), fc.string({ maxLength: 256, unit: "grapheme" }));
const timestamp = fc.integer({ min: NOW - 200, max: NOW + 200 });

function signFor(
  entry: SchemeCase,
  input: { id: string; timestamp: number; body: string | Uint8Array; secret: string },
) {
  return signWith(entry.scheme, { id: input.id, timestamp: input.timestamp, body: input.body, secrets: input.secret });
}

function check(
  entry: SchemeCase,
  bodyValue: string | Uint8Array,
  headers: Record<string, string>,
  secrets: string | string[],
) {
  return verify({ body: bodyValue, headers, secrets, scheme: entry.scheme, parse: "none", now: clock });
}

const failed = (result: VerifyResult<unknown>) => !result.ok && result.error instanceof WebhookVerificationError;

/** Replaces the character at `index` with a different printable ASCII character. */
function flipChar(text: string, index: number, shift: number): string {
  const code = text.charCodeAt(index);
  const replaced = 33 + ((code - 33 + 1 + (shift % 93) + 94) % 94);
  return (
    text.slice(0, index) + String.fromCharCode(replaced === code ? replaced + 1 : replaced) + text.slice(index + 1)
  );
}

describe.each(schemeCases.map((entry) => [caseName(entry), entry] as const))("%s", (_name, entry) => {
  it("sign → verify round-trips for any body, id and secret", () => {
    fc.assert(
      fc.property(id, timestamp, body, entry.secret, (idValue, ts, bodyValue, secret) => {
        const headers = signFor(entry, { id: idValue, timestamp: ts, body: bodyValue, secret });
        const result = check(entry, bodyValue, headers, secret);
        expect(result.ok).toBe(true);
        if (result.ok) {
          expect(result.payload).toBe(bodyValue);
          if (entry.idHeader) expect(result.id).toBe(idValue);
          expect(result.timestamp).toBe(entry.timestamped ? ts : undefined);
        }
      }),
      runs,
    );
  });

  it("flipping any single byte of the body fails", () => {
    const bytes = fc.uint8Array({ minLength: 1, maxLength: 256 });
    fc.assert(
      fc.property(
        id,
        bytes,
        entry.secret,
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (idValue, bodyValue, secret, at, mask) => {
          const headers = signFor(entry, { id: idValue, timestamp: NOW, body: bodyValue, secret });
          const altered = Uint8Array.from(bodyValue);
          altered[at % altered.length]! ^= mask;
          expect(failed(check(entry, altered, headers, secret))).toBe(true);
        },
      ),
      runs,
    );
  });

  it("flipping any single character of a signed header (signature, id, timestamp) fails", () => {
    fc.assert(
      fc.property(
        id,
        body,
        entry.secret,
        fc.nat(),
        fc.nat(),
        fc.nat(),
        (idValue, bodyValue, secret, which, at, shift) => {
          const headers = signFor(entry, { id: idValue, timestamp: NOW, body: bodyValue, secret });
          const signed = [entry.scheme.signatureHeader];
          if (entry.scheme.name === "standard-webhooks") signed.push("webhook-id", "webhook-timestamp");
          if (entry.scheme.name === "slack") signed.push("x-slack-request-timestamp");
          const name = signed[which % signed.length]!;
          const value = headers[name]!;
          const altered = { ...headers, [name]: flipChar(value, at % value.length, shift) };
          expect(failed(check(entry, bodyValue, altered, secret))).toBe(true);
        },
      ),
      runs,
    );
  });

  it("rotation accepts any listed secret and rejects the others", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(entry.secret, { minLength: 2, maxLength: 4 }),
        fc.nat(),
        body,
        (secrets, pick, bodyValue) => {
          const signer = secrets[pick % secrets.length]!;
          const headers = signFor(entry, { id: "msg_rotation", timestamp: NOW, body: bodyValue, secret: signer });
          expect(check(entry, bodyValue, headers, secrets).ok).toBe(true);
          const others = secrets.filter((secret) => secret !== signer);
          const rejected = check(entry, bodyValue, headers, others);
          expect(rejected.ok ? undefined : rejected.error.code).toBe("no_matching_signature");
        },
      ),
      runs,
    );
  });
});

describe("whatever the input, verify returns a result and throws nothing", () => {
  const names = fc.oneof(
    fc.constantFrom(
      "webhook-id",
      "webhook-timestamp",
      "webhook-signature",
      "Webhook-Signature",
      "svix-signature",
      "stripe-signature",
      "x-hub-signature-256",
      "x-hub-signature",
      "x-shopify-hmac-sha256",
      "x-slack-signature",
      "x-slack-request-timestamp",
      "content-length",
    ),
    fc.string({ maxLength: 20 }),
  );
  const tokens = fc.oneof(
    fc.constantFrom("v1,", "v1a,", "t=", "v1=", "sha256=", "v0=", " ", ",", "=", "1700000000", "0", "-1", "."),
    fc.string({ maxLength: 12 }),
    fc.base64String({ maxLength: 90 }),
  );
  const value = fc.oneof(
    fc.array(tokens, { maxLength: 6 }).map((parts) => parts.join("")),
    fc.array(fc.string({ maxLength: 30 }), { maxLength: 3 }),
    fc.constant(undefined),
  );
  const headers = fc.dictionary(names, value, { maxKeys: 8 });
  const anyBody = fc.oneof(body, fc.anything(), fc.constant(undefined), fc.constant("[object Object]"));
  const anySecrets = fc.oneof(
    fc.constantFrom(...schemeCases.map((entry) => entry.secret)).chain((secret) => secret),
    fc.constantFrom(keyPairs[0]!.publicKey, "whsk_AAAA", "whpk_" + "A".repeat(43) + "=", " whsec_abc", "sk_live_x", ""),
    fc.string(),
    fc.array(fc.oneof(fc.string(), fc.anything()), { maxLength: 3 }),
    fc.anything(),
  );
  const scheme = fc.constantFrom(...schemeCases.map((entry) => entry.scheme));
  const parse = fc.constantFrom("json" as const, "form" as const, "none" as const);

  it("never throws for arbitrary header maps, bodies and secrets; failures carry a known code", () => {
    fc.assert(
      fc.property(headers, anyBody, anySecrets, scheme, parse, (headerMap, bodyValue, secrets, schemeValue, format) => {
        const result = verify({
          body: bodyValue as string,
          headers: headerMap,
          secrets: secrets as string,
          scheme: schemeValue,
          parse: format,
          now: clock,
        });
        if (!result.ok) {
          expect(result.error).toBeInstanceOf(WebhookVerificationError);
          expect(VERIFICATION_ERROR_CODES).toContain(result.error.code);
          expect(result.error.message.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 400 },
    );
  });
});
