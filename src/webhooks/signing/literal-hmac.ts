import type { KeyObject } from "node:crypto";
import { WebhookVerificationError } from "./errors";
import { hmacSha256, type RawBody, sameSignature } from "./hmac";
import { literalKeys, literalSigningKeys } from "./literal-keys";
import { signingSecrets } from "./scheme";
import type { WebhookSecrets } from "./secrets";

// Stripe, GitHub, Shopify and Slack key HMAC-SHA256 with the secret as written and differ only in what they sign
// before the body and in how they write the result: these are their `matches` and their signing key.

/**
 * Whether one of `signatures` is the HMAC-SHA256 of `prefix` and `body` under one of `secrets`, or the
 * `secret_invalid` error of the first bad secret.
 */
export function matchesLiteralHmac(
  scheme: string,
  secrets: readonly string[],
  prefix: string,
  body: RawBody,
  signatures: readonly string[],
  encoding: "base64" | "hex",
): boolean | WebhookVerificationError {
  const keys = literalKeys(scheme, secrets);
  if (keys instanceof WebhookVerificationError) return keys;
  for (const key of keys) {
    const expected = hmacSha256(key, prefix, body, encoding);
    for (const signature of signatures) if (sameSignature(expected, signature)) return true;
  }
  return false;
}

/**
 * The one key of a provider whose requests carry one signature (GitHub, Shopify, Slack): a TypeError for none, more
 * than one, or a secret of the wrong form.
 */
export function oneLiteralSigningKey(scheme: string, provider: string, secrets: WebhookSecrets): KeyObject {
  const keys = literalSigningKeys(scheme, signingSecrets(scheme, secrets));
  if (keys.length !== 1)
    throw new TypeError(`${scheme}.sign: ${provider} sends one signature; pass exactly one secret`);
  return keys[0] as KeyObject;
}
