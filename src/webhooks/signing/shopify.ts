import { WebhookVerificationError } from "./errors";
import type { HeaderLookup } from "./headers";
import { hmacSha256, type RawBody, sameSignature } from "./hmac";
import { literalKeys, literalSigningKeys } from "./literal-keys";
import {
  missingHeader,
  type SchemeSignInput,
  type SignedHeaders,
  signingBody,
  signingSecrets,
  type WebhookScheme,
} from "./scheme";

const NAME = "shopify";
const HEADER = "x-shopify-hmac-sha256";

// Shopify, "Verify webhooks": `X-Shopify-Hmac-SHA256` is the base64 HMAC-SHA256 of the raw body.
function read(header: HeaderLookup): SignedHeaders | WebhookVerificationError {
  const value = header(HEADER);
  if (value === undefined) return missingHeader(NAME, ["X-Shopify-Hmac-Sha256"]);
  return { id: header("x-shopify-webhook-id"), timestamp: undefined, signatures: [value.trim()] };
}

function matches(signed: SignedHeaders, body: RawBody, secrets: readonly string[]) {
  const keys = literalKeys(NAME, secrets);
  if (keys instanceof WebhookVerificationError) return keys;
  for (const key of keys) {
    const expected = hmacSha256(key, "", body, "base64");
    for (const signature of signed.signatures) if (sameSignature(expected, signature)) return true;
  }
  return false;
}

function signShopify(input: SchemeSignInput): Record<string, string> {
  const keys = literalSigningKeys(NAME, signingSecrets(NAME, input.secrets));
  if (keys.length !== 1) throw new TypeError(`${NAME}.sign: Shopify sends one signature; pass exactly one secret`);
  const headers: Record<string, string> = {
    [HEADER]: hmacSha256(keys[0]!, "", signingBody(NAME, input.body), "base64"),
  };
  if (input.id !== undefined) headers["x-shopify-webhook-id"] = input.id;
  return headers;
}

/**
 * Shopify's scheme: `X-Shopify-Hmac-Sha256: <base64>`, HMAC-SHA256 of the body with the app's client secret.
 * No timestamp is signed: deduplicate on `X-Shopify-Webhook-Id` (`id`).
 *
 * @see https://shopify.dev/docs/apps/build/webhooks/subscribe/https#step-5-verify-the-webhook
 */
export const shopify = {
  name: NAME,
  signatureHeader: HEADER,
  secretForm: "the app's client secret (API secret key), as written",
  read,
  matches,
  sign: signShopify,
} satisfies WebhookScheme;
