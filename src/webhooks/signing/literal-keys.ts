import { createSecretKey, type KeyObject } from "node:crypto";
import { WebhookVerificationError } from "./errors";
import { invalidSecret } from "./scheme";
import { KeyCache } from "./secrets";

type LiteralKey = KeyObject | { readonly invalid: string };

// Stripe, GitHub, Shopify and Slack use the secret string itself, as UTF-8, as the HMAC key.
function decodeLiteral(secret: string): LiteralKey {
  if (secret.trim() !== secret) {
    return {
      invalid:
        "has leading or trailing whitespace (often a newline from a .env file or a secrets mount): trim it where it is loaded",
    };
  }
  if (/^(sk|rk|pk)_(live|test)_/.test(secret)) {
    return { invalid: "looks like a Stripe API key, not a webhook signing secret (whsec_…)" };
  }
  return createSecretKey(Buffer.from(secret, "utf8"));
}

const cache = new KeyCache<LiteralKey>();

/** The HMAC keys of literal secrets (cached per secret string), or the `secret_invalid` error of the first bad one. */
export function literalKeys(scheme: string, secrets: readonly string[]): KeyObject[] | WebhookVerificationError {
  const keys: KeyObject[] = [];
  for (const [index, secret] of secrets.entries()) {
    const key = cache.get(secret, decodeLiteral);
    if ("invalid" in key) return invalidSecret(scheme, secret, index, key.invalid);
    keys.push(key);
  }
  return keys;
}

/** The HMAC keys of a signer's literal secrets; TypeError for a secret of the wrong form. */
export function literalSigningKeys(scheme: string, secrets: readonly string[]): KeyObject[] {
  const keys = literalKeys(scheme, secrets);
  if (keys instanceof WebhookVerificationError) throw new TypeError(`${scheme}.sign: ${keys.message}`);
  return keys;
}
