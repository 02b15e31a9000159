import { isWebhookVerificationError, type WebhookVerificationError } from "../signing/errors";
import type { PayloadFormat } from "../signing/payload";
import type { SignedHeaders, WebhookScheme } from "../signing/scheme";
import { secretList, type WebhookSecrets } from "../signing/secrets";
import { standardWebhooks } from "../signing/standard-webhooks";
import { type Tolerance, tolerance } from "../signing/tolerance";

const CALLER = "createWebhookConsumer";

// Signed headers with no signature: matching them decodes every secret and compares nothing.
const NO_SIGNATURE: SignedHeaders = { id: "probe", timestamp: 0, timestampText: "0", signatures: [] };

/**
 * The `secret_invalid` error of a set secret that `scheme` cannot use (not base64 after `whsec_`, surrounding
 * whitespace, a Stripe API key), found without a delivery: a scheme decodes its secrets before it compares a signature.
 * `undefined` when every secret is usable, or when a scheme of the user's cannot be asked this way.
 */
export function unusableSecret(
  scheme: WebhookScheme,
  secrets: readonly string[],
): WebhookVerificationError | undefined {
  let matched: unknown;
  try {
    matched = scheme.matches(NO_SIGNATURE, "", secrets);
  } catch {
    return undefined;
  }
  return isWebhookVerificationError(matched) && matched.code === "secret_invalid" ? matched : undefined;
}

/**
 * Refuses, when the consumer is created, what `verify` would refuse with the same TypeError on every delivery (a 500
 * each): secrets of the wrong type or of a form the scheme cannot use, a scheme that is none, an unknown `parse`, a
 * bad `toleranceSeconds`. An unset secret (`undefined`, `""`) passes: each delivery gets `secret_invalid` until it is
 * set. The message names a bad secret by fingerprint, never by value.
 */
export function checkVerificationOptions(options: {
  secrets: WebhookSecrets;
  scheme?: WebhookScheme | undefined;
  parse?: PayloadFormat | undefined;
  toleranceSeconds?: Tolerance | undefined;
}): void {
  const scheme = options.scheme ?? standardWebhooks;
  const { parse } = options;
  if (typeof scheme !== "object" || scheme === null || typeof scheme.matches !== "function") {
    throw new TypeError(`${CALLER}: scheme must be a WebhookScheme (e.g. standardWebhooks, stripe, github).`);
  }
  if (parse !== undefined && parse !== "json" && parse !== "form" && parse !== "none") {
    throw new TypeError(`${CALLER}: parse must be "json", "form" or "none".`);
  }
  tolerance(options.toleranceSeconds, CALLER);
  const secrets = secretList(options.secrets, CALLER, CALLER);
  const unusable = Array.isArray(secrets) ? unusableSecret(scheme, secrets) : undefined;
  if (unusable !== undefined) throw new TypeError(`${CALLER}: ${unusable.message}`);
}
