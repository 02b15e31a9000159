/**
 * Webhook signing and verification: Standard Webhooks (the default, `v1` HMAC and `v1a` Ed25519) plus the
 * schemes consumers meet most (Stripe, GitHub, Shopify, Slack), behind one call shape.
 */
export {
  isWebhookVerificationError,
  VERIFICATION_ERROR_CODES,
  type VerificationErrorCode,
  type VerificationErrorOptions,
  WebhookVerificationError,
} from "./errors";
export { github } from "./github";
export type { HeaderLookup, WebhookHeaders } from "./headers";
export type { RawBody } from "./hmac";
export type { PayloadFormat } from "./payload";
export type { SchemeSignInput, SignedHeaders, WebhookScheme } from "./scheme";
export { secretFingerprint, type WebhookSecrets } from "./secrets";
export { shopify } from "./shopify";
export { type SignInput, sign, signWith } from "./sign";
export { slack } from "./slack";
export {
  generateSecret,
  generateSigningKeyPair,
  PUBLIC_KEY_PREFIX,
  type RandomBytes,
  SECRET_PREFIX,
  SIGNING_KEY_PREFIX,
  type SigningKeyPair,
} from "./standard-keys";
export { type StandardWebhookHeaders, standardWebhooks } from "./standard-webhooks";
export { stripe } from "./stripe";
export type { Tolerance } from "./tolerance";
export { type VerifyInput, type VerifyResult, verify } from "./verify";
