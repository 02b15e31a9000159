import { github, shopify, slack, standardWebhooks, stripe, type WebhookScheme } from "../webhooks/signing/index";
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
  return secrets;
}
