import type { SchemeSignInput, WebhookScheme } from "./scheme";
import type { WebhookSecrets } from "./secrets";
import { type StandardWebhookHeaders, standardWebhooks } from "./standard-webhooks";

/** Input of {@link sign}: one delivery attempt. */
export interface SignInput {
  /** The message id, stable across retries (the consumer's idempotency key): a header value without '.'. */
  id: string;
  /** The attempt's time in Unix seconds (a retry is signed afresh). */
  timestamp: number;
  /** The exact body that will be sent. */
  body: string | Uint8Array;
  /** `whsec_…` secrets (`v1`) and/or `whsk_…` Ed25519 keys (`v1a`); several give several signatures. */
  secrets: WebhookSecrets;
}

/**
 * The Standard Webhooks headers for one delivery attempt: `webhook-id`, `webhook-timestamp` and
 * `webhook-signature` (space-separated `v1,` / `v1a,` signatures, one per secret).
 *
 * @example
 * const headers = sign({ id: "msg_1", timestamp: Math.floor(Date.now() / 1000), body, secrets: endpoint.secret });
 * @throws TypeError on misuse: an id with '.' or one HTTP would alter or refuse (surrounding whitespace, a control
 * character, one above U+00FF), a non-integer timestamp, no secret, a secret of the wrong form, more than 10 distinct
 * secrets of one kind.
 */
export function sign(input: SignInput): StandardWebhookHeaders {
  return standardWebhooks.sign(input);
}

/**
 * The headers a provider using `scheme` would send (for tests and for providers that speak that scheme).
 *
 * @example const headers = signWith(github, { body, secrets: "It's a Secret to Everybody" });
 */
export function signWith(scheme: WebhookScheme, input: SchemeSignInput): Record<string, string> {
  if (typeof scheme !== "object" || scheme === null || typeof scheme.sign !== "function") {
    throw new TypeError("signWith: scheme must be a WebhookScheme (e.g. standardWebhooks, stripe, github)");
  }
  return scheme.sign(input);
}
