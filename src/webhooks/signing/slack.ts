import type { WebhookVerificationError } from "./errors";
import type { HeaderLookup } from "./headers";
import { hmacSha256, type RawBody } from "./hmac";
import { matchesLiteralHmac, oneLiteralSigningKey } from "./literal-hmac";
import { stringMember } from "./payload";
import {
  malformedHeader,
  missingHeader,
  parseSeconds,
  type SchemeSignInput,
  type SignedHeaders,
  signingBody,
  signingTimestamp,
  type WebhookScheme,
} from "./scheme";

const NAME = "slack";
const HEADER = "x-slack-signature";
const TIMESTAMP = "x-slack-request-timestamp";
const VERSION = "v0=";

// Slack, "Verifying requests from Slack": `X-Slack-Signature: v0=<hex>` over `v0:<timestamp>:<body>`.
function read(header: HeaderLookup): SignedHeaders | WebhookVerificationError {
  const value = header(HEADER);
  const timestampText = header(TIMESTAMP);
  if (value === undefined || timestampText === undefined) {
    const absent = [
      value === undefined ? "X-Slack-Signature" : "",
      timestampText === undefined ? "X-Slack-Request-Timestamp" : "",
    ];
    return missingHeader(NAME, absent.filter(Boolean));
  }
  const timestamp = parseSeconds(timestampText);
  if (timestamp === undefined)
    return malformedHeader(NAME, "X-Slack-Request-Timestamp", timestampText, "integer Unix seconds");
  const signatures: string[] = [];
  for (const item of value.split(",")) {
    const token = item.trim();
    if (!token.startsWith(VERSION)) return malformedHeader(NAME, "X-Slack-Signature", value, "v0=<hex>");
    signatures.push(token.slice(VERSION.length));
  }
  return { id: undefined, timestamp, timestampText, signatures };
}

function matches(signed: SignedHeaders, body: RawBody, secrets: readonly string[]) {
  const prefix = `v0:${signed.timestampText ?? signed.timestamp}:`;
  return matchesLiteralHmac(NAME, secrets, prefix, body, signed.signatures, "hex");
}

function signSlack(input: SchemeSignInput): Record<string, string> {
  const key = oneLiteralSigningKey(NAME, "Slack", input.secrets);
  const timestamp = signingTimestamp(NAME, input.timestamp);
  return {
    [HEADER]: VERSION + hmacSha256(key, `v0:${timestamp}:`, signingBody(NAME, input.body), "hex"),
    [TIMESTAMP]: String(timestamp),
  };
}

/**
 * Slack's scheme: `X-Slack-Signature: v0=<hex>` and `X-Slack-Request-Timestamp`, HMAC-SHA256 of
 * `v0:timestamp:body` with the app's signing secret. Slash commands post forms: verify with `parse: "form"`.
 *
 * @see https://api.slack.com/authentication/verifying-requests-from-slack
 */
export const slack = {
  name: NAME,
  signatureHeader: HEADER,
  secretForm: "the app's signing secret (not the verification token), as written",
  read,
  matches,
  sign: signSlack,
  payloadId: (payload: unknown) => stringMember(payload, "event_id"),
} satisfies WebhookScheme;
