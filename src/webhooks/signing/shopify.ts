import type { WebhookVerificationError } from "./errors";
import type { HeaderLookup } from "./headers";
import { hmacSha256, type RawBody } from "./hmac";
import { matchesLiteralHmac, oneLiteralSigningKey } from "./literal-hmac";
import {
  malformedHeader,
  missingHeader,
  type SchemeSignInput,
  type SignedHeaders,
  signingBody,
  type WebhookScheme,
} from "./scheme";

const NAME = "shopify";
const HEADER = "x-shopify-hmac-sha256";
// RFC 4648 §4 alphabet: an empty value or other characters is no signature at all (malformed), not a wrong one.
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

// Shopify, "Verify webhooks": `X-Shopify-Hmac-SHA256` is the base64 HMAC-SHA256 of the raw body.
function read(header: HeaderLookup): SignedHeaders | WebhookVerificationError {
  const value = header(HEADER);
  if (value === undefined) return missingHeader(NAME, ["X-Shopify-Hmac-Sha256"]);
  // Repeated fields arrive joined by ", " (RFC 9110 §5.3); base64 has no comma, so each item is one signature,
  // trimmed of its optional whitespace (RFC 9110 §5.6.3).
  const signatures = value.includes(",") ? value.split(",").map((item) => item.trim()) : [value.trim()];
  if (!signatures.every((signature) => BASE64.test(signature))) {
    return malformedHeader(NAME, "X-Shopify-Hmac-Sha256", value, "the base64 HMAC-SHA256 of the body");
  }
  return { id: header("x-shopify-webhook-id"), timestamp: undefined, signatures };
}

function matches(signed: SignedHeaders, body: RawBody, secrets: readonly string[]) {
  return matchesLiteralHmac(NAME, secrets, "", body, signed.signatures, "base64");
}

function signShopify(input: SchemeSignInput): Record<string, string> {
  const key = oneLiteralSigningKey(NAME, "Shopify", input.secrets);
  const headers: Record<string, string> = {
    [HEADER]: hmacSha256(key, "", signingBody(NAME, input.body), "base64"),
  };
  if (input.id !== undefined) headers["x-shopify-webhook-id"] = input.id;
  return headers;
}

/**
 * Shopify's scheme: `X-Shopify-Hmac-Sha256: <base64>`, HMAC-SHA256 of the body with the app's client secret.
 * Only the body is signed: no timestamp (so no replay window) and no id. The `id` is the sender's
 * `X-Shopify-Webhook-Id` header, unsigned: de-duplicating on it stops Shopify's retries, which keep it, but not a
 * captured body replayed under a new id. To stop those, de-duplicate on the signed body (its SHA-256, or a field of
 * the payload such as the resource's id with its `updated_at`) and keep the endpoint's secret private, behind TLS.
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
