import { WebhookVerificationError } from "./errors";
import type { HeaderLookup } from "./headers";
import type { RawBody } from "./hmac";
import { describeSecret, type WebhookSecrets } from "./secrets";

/** What a scheme read from the headers: the delivery id, the signed timestamp and the signatures. */
export interface SignedHeaders {
  /**
   * Delivery id when the scheme carries one (Standard Webhooks `webhook-id`, GitHub `X-GitHub-Delivery`…). Signed
   * only where the scheme signs it (Standard Webhooks); GitHub's and Shopify's are headers a replay can change.
   */
  readonly id: string | undefined;
  /** Unix seconds, only when the timestamp is covered by the signature (replay protection). */
  readonly timestamp: number | undefined;
  /** The timestamp as received (canonical decimal), reused to build the signed content. */
  readonly timestampText?: string | undefined;
  /** The received signatures, in the scheme's own notation. */
  readonly signatures: readonly string[];
}

/** Input of a scheme's signer (providers, and tests that play the provider). */
export interface SchemeSignInput {
  /** Delivery id; required by Standard Webhooks, sent as an informative header by GitHub and Shopify. */
  id?: string | undefined;
  /** Unix seconds; required by the timestamped schemes (Standard Webhooks, Stripe, Slack). */
  timestamp?: number | undefined;
  /** The exact body that will be sent. */
  body: RawBody;
  /** One secret, or several during rotation (one signature each). */
  secrets: WebhookSecrets;
}

/**
 * A signature scheme: how a provider signs a delivery and how a consumer checks it. `verify` and
 * `signWith` take any scheme, so one call shape serves them all.
 */
export interface WebhookScheme {
  /** Stable name, e.g. `standard-webhooks`, `stripe`, `github`. */
  readonly name: string;
  /** The header that carries the signature (lower case), named in messages. */
  readonly signatureHeader: string;
  /** What a secret of this scheme looks like, for messages. */
  readonly secretForm: string;
  /** Reads and checks the syntax of the scheme's headers. */
  read(header: HeaderLookup): SignedHeaders | WebhookVerificationError;
  /** Whether any received signature is valid for `body` under any of `secrets` (constant-time comparisons). */
  matches(signed: SignedHeaders, body: RawBody, secrets: readonly string[]): boolean | WebhookVerificationError;
  /** The headers a provider sends for one attempt. Throws TypeError on misuse (missing id, bad secret). */
  sign(input: SchemeSignInput): Record<string, string>;
  /** The delivery id found in the payload, for schemes whose headers carry none (Stripe's `event.id`). */
  payloadId?(payload: unknown): string | undefined;
}

/** The `secret_invalid` error for secret `index`. */
export function invalidSecret(scheme: string, secret: string, index: number, reason: string): WebhookVerificationError {
  return new WebhookVerificationError("secret_invalid", `Secret ${describeSecret(secret, index)} ${reason}.`, {
    scheme,
  });
}

/** "a", "a and b", "a, b and c". */
function listed(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

/** The `missing_header` error naming the header(s) that were looked for. */
export function missingHeader(scheme: string, names: readonly string[], hint = ""): WebhookVerificationError {
  const what = names.length === 1 ? `The ${names[0]} header is missing` : `The ${listed(names)} headers are missing`;
  return new WebhookVerificationError(
    "missing_header",
    `${what}, so this request cannot be verified as a ${scheme} webhook.${hint ? ` ${hint}` : ""} Check that the request comes from the provider, that the right scheme is configured, and that a proxy does not drop the header.`,
    { scheme },
  );
}

/** The `malformed_header` error quoting (a bounded prefix of) the received value. */
export function malformedHeader(
  scheme: string,
  name: string,
  value: string,
  expected: string,
): WebhookVerificationError {
  const shown = value.length > 80 ? `${value.slice(0, 80)}…` : value;
  return new WebhookVerificationError(
    "malformed_header",
    `The ${name} header ${JSON.stringify(shown)} is malformed: expected ${expected}.`,
    { scheme },
  );
}

/** The secrets of a signer as a non-empty list; TypeError otherwise (signing with no secret is misuse). */
export function signingSecrets(scheme: string, secrets: WebhookSecrets): readonly string[] {
  const list: readonly unknown[] = Array.isArray(secrets) ? secrets : [secrets];
  if (list.length === 0 || list.some((secret) => typeof secret !== "string" || secret.length === 0)) {
    throw new TypeError(`${scheme}.sign: secrets must be a non-empty string or a non-empty list of them`);
  }
  return list as readonly string[];
}

// Unix seconds of the year 5138: a larger "timestamp" is milliseconds (Date.now()), not seconds.
const MAX_SECONDS = 99_999_999_999;

/** The timestamp of a signer as non-negative integer seconds; TypeError otherwise (milliseconds included). */
export function signingTimestamp(scheme: string, timestamp: unknown): number {
  if (typeof timestamp !== "number" || !Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new TypeError(`${scheme}.sign: timestamp must be a non-negative integer number of Unix seconds`);
  }
  if (timestamp > MAX_SECONDS) {
    throw new TypeError(
      `${scheme}.sign: timestamp ${timestamp} looks like milliseconds; pass Unix seconds: Math.floor(Date.now() / 1000)`,
    );
  }
  return timestamp;
}

/** The body of a signer: the exact text or bytes sent; TypeError for anything else (a parsed object, say). */
export function signingBody(scheme: string, body: unknown): RawBody {
  if (typeof body === "string" || body instanceof Uint8Array) return body;
  throw new TypeError(
    `${scheme}.sign: body must be the exact string or bytes that will be sent, got ${body === null ? "null" : typeof body}; serialise the payload once (JSON.stringify) and send those same bytes`,
  );
}

// Canonical decimal Unix seconds: no sign, no leading zeros, at most 15 digits (a safe integer).
const SECONDS = /^(?:0|[1-9][0-9]{0,14})$/;

/** Parses a timestamp header in canonical decimal seconds; `undefined` when malformed. */
export function parseSeconds(text: string): number | undefined {
  return SECONDS.test(text) ? Number(text) : undefined;
}
