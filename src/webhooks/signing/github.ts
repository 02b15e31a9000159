import { WebhookVerificationError } from "./errors";
import type { HeaderLookup } from "./headers";
import { hmacSha256, type RawBody, sameSignature } from "./hmac";
import { literalKeys, literalSigningKeys } from "./literal-keys";
import {
  malformedHeader,
  missingHeader,
  type SchemeSignInput,
  type SignedHeaders,
  signingBody,
  signingSecrets,
  type WebhookScheme,
} from "./scheme";

const NAME = "github";
const HEADER = "x-hub-signature-256";
const PREFIX = "sha256=";

// GitHub, "Validating webhook deliveries": `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`.
function read(header: HeaderLookup): SignedHeaders | WebhookVerificationError {
  const value = header(HEADER);
  if (value === undefined) {
    const legacy =
      header("x-hub-signature") === undefined
        ? ""
        : "Only the SHA-1 X-Hub-Signature header came; it is not accepted (SHA-1).";
    return missingHeader(NAME, ["X-Hub-Signature-256"], legacy);
  }
  const signatures: string[] = [];
  // Repeated fields arrive joined by ", " (RFC 9110 §5.3); each must be a sha256= value.
  for (const item of value.includes(",") ? value.split(",") : [value]) {
    const token = item.trim();
    if (!token.startsWith(PREFIX)) return malformedHeader(NAME, "X-Hub-Signature-256", value, "sha256=<hex>");
    signatures.push(token.slice(PREFIX.length));
  }
  return { id: header("x-github-delivery"), timestamp: undefined, signatures };
}

function matches(signed: SignedHeaders, body: RawBody, secrets: readonly string[]) {
  const keys = literalKeys(NAME, secrets);
  if (keys instanceof WebhookVerificationError) return keys;
  for (const key of keys) {
    const expected = hmacSha256(key, "", body, "hex");
    for (const signature of signed.signatures) if (sameSignature(expected, signature)) return true;
  }
  return false;
}

function signGithub(input: SchemeSignInput): Record<string, string> {
  const keys = literalSigningKeys(NAME, signingSecrets(NAME, input.secrets));
  if (keys.length !== 1) throw new TypeError(`${NAME}.sign: GitHub sends one signature; pass exactly one secret`);
  const headers: Record<string, string> = {
    [HEADER]: PREFIX + hmacSha256(keys[0]!, "", signingBody(NAME, input.body), "hex"),
  };
  if (input.id !== undefined) headers["x-github-delivery"] = input.id;
  return headers;
}

/**
 * GitHub's scheme: `X-Hub-Signature-256: sha256=<hex>`, HMAC-SHA256 of the body with the webhook secret as
 * written. No timestamp is signed, so there is no replay window: deduplicate on `X-GitHub-Delivery` (`id`).
 *
 * @see https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
 */
export const github = {
  name: NAME,
  signatureHeader: HEADER,
  secretForm: "the webhook secret as typed in the GitHub settings (any text)",
  read,
  matches,
  sign: signGithub,
} satisfies WebhookScheme;
