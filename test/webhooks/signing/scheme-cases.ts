import fc from "fast-check";
import {
  generateSigningKeyPair,
  github,
  type SigningKeyPair,
  shopify,
  slack,
  standardWebhooks,
  stripe,
  type WebhookScheme,
} from "../../../src/webhooks/signing/index";

/** One row of the scheme matrix that example tests and properties share. */
export interface SchemeCase {
  readonly scheme: WebhookScheme;
  /** Secrets this scheme accepts, as a generator. */
  readonly secret: fc.Arbitrary<string>;
  /** Whether the signature covers a timestamp (and the tolerance window applies). */
  readonly timestamped: boolean;
  /** Whether the scheme carries a delivery id in its headers. */
  readonly idHeader: boolean;
  /** Whether one header carries one signature per secret (providers' rotation). */
  readonly multiSignature: boolean;
}

const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");

/** Literal secrets: any text without surrounding whitespace and not a Stripe API key. */
const literalSecret = fc
  .string({ minLength: 1, maxLength: 40, unit: "grapheme" })
  .filter((text) => text.trim() === text && !/^(sk|rk|pk)_(live|test)_/.test(text));

// Ed25519 key generation is slow for a property; a small pool is enough to vary the key.
export const keyPairs: readonly SigningKeyPair[] = Array.from({ length: 4 }, () => generateSigningKeyPair());

export const hmacSecret = fc.uint8Array({ minLength: 24, maxLength: 64 }).map((bytes) => `whsec_${base64(bytes)}`);

export const schemeCases: readonly SchemeCase[] = [
  { scheme: standardWebhooks, secret: hmacSecret, timestamped: true, idHeader: true, multiSignature: true },
  {
    scheme: standardWebhooks,
    secret: fc.constantFrom(...keyPairs.map((pair) => pair.secretKey)),
    timestamped: true,
    idHeader: true,
    multiSignature: true,
  },
  {
    scheme: stripe,
    secret: fc
      .string({ minLength: 8, maxLength: 40, unit: fc.constantFrom(..."abcdefXYZ0123456789") })
      .map((tail) => `whsec_${tail}`),
    timestamped: true,
    idHeader: false,
    multiSignature: true,
  },
  { scheme: github, secret: literalSecret, timestamped: false, idHeader: true, multiSignature: false },
  { scheme: shopify, secret: literalSecret, timestamped: false, idHeader: true, multiSignature: false },
  { scheme: slack, secret: literalSecret, timestamped: true, idHeader: false, multiSignature: false },
];

/** The label of a case in test names. */
export function caseName(entry: SchemeCase): string {
  return entry.scheme === standardWebhooks && entry.secret !== hmacSecret ? "standard-webhooks v1a" : entry.scheme.name;
}
