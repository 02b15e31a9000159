import { unusableSecret } from "../webhooks/consumer/verification-options";
import {
  github,
  shopify,
  signWith,
  slack,
  standardWebhooks,
  stripe,
  type WebhookScheme,
} from "../webhooks/signing/index";
import { UsageError } from "./output";

/** The `--scheme` names and the library's schemes they pick. */
export const SCHEMES: Readonly<Record<string, WebhookScheme>> = {
  standard: standardWebhooks,
  stripe,
  github,
  shopify,
  slack,
};

/** The scheme named by `--scheme` (default `standard`); a {@link UsageError} for another name. */
export function schemeOption(name: string | undefined): WebhookScheme {
  const scheme = SCHEMES[name ?? "standard"];
  if (scheme === undefined) {
    throw new UsageError(`--scheme must be one of ${Object.keys(SCHEMES).join(", ")}, got "${name}"`);
  }
  return scheme;
}

/** The `--secret` values (repeat the option while rotating); a {@link UsageError} when there is none. */
export function secretsOption(values: readonly string[] | undefined): string[] {
  const secrets = [...(values ?? [])];
  if (secrets.length === 0 && process.env.WEBHOOK_SECRET) secrets.push(process.env.WEBHOOK_SECRET);
  if (secrets.length === 0) throw new UsageError("--secret is required (or set WEBHOOK_SECRET)");
  // `--secret "$WEBHOOK_SECRET"` with the variable unset passes "": no secret either, so misuse rather than a
  // verdict on the capture, the delivery or the consumer.
  const empty = secrets.indexOf("");
  if (empty !== -1) throw new UsageError(`--secret #${empty + 1} is empty: is the variable it comes from set?`);
  return secrets;
}

/**
 * Refuses, as `createWebhookConsumer` does when it is created, a secret `scheme` cannot use (not base64 after
 * `whsec_`, surrounding whitespace, a Stripe API key): `listen` would otherwise answer every delivery 500.
 * The message names the secret by fingerprint only.
 */
export function consumerSecrets(scheme: WebhookScheme, secrets: readonly string[]): void {
  const unusable = unusableSecret(scheme, secrets);
  if (unusable !== undefined) throw new UsageError(`--secret: ${unusable.message}`, { cause: unusable });
}

/**
 * Refuses secrets `scheme` cannot sign with (not base64 after `whsec_`, a `whpk_` public key), by signing an empty
 * body as the command would: a command that signs later would report it as the receiver's failure.
 */
export function signingSecrets(scheme: WebhookScheme, secrets: readonly string[]): void {
  try {
    signWith(scheme, { id: "msg_probe", timestamp: Math.floor(Date.now() / 1000), body: "", secrets: [...secrets] });
  } catch (error) {
    throw new UsageError(`--secret: ${(error as Error).message}`, { cause: error });
  }
}
