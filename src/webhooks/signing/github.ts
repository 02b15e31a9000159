import type { WebhookVerificationError } from "./errors";
import type { HeaderLookup } from "./headers";
import { hmacSha256, type RawBody } from "./hmac";
import { matchesLiteralHmac, oneLiteralSigningKey } from "./literal-hmac";
import {
  malformedHeader,
  missingHeader,
  type SchemeSignInput,
  type SignedHeaders,
  signingBody,
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
  return matchesLiteralHmac(NAME, secrets, "", body, signed.signatures, "hex");
}

function signGithub(input: SchemeSignInput): Record<string, string> {
  const key = oneLiteralSigningKey(NAME, "GitHub", input.secrets);
  const headers: Record<string, string> = {
    [HEADER]: PREFIX + hmacSha256(key, "", signingBody(NAME, input.body), "hex"),
  };
  if (input.id !== undefined) headers["x-github-delivery"] = input.id;
  return headers;
}

/**
 * GitHub's scheme: `X-Hub-Signature-256: sha256=<hex>`, HMAC-SHA256 of the body with the webhook secret as
 * written. Only the body is signed: no timestamp (so no replay window) and no id. The `id` is the sender's
 * `X-GitHub-Delivery` header, unsigned: de-duplicating on it stops GitHub's redeliveries, which keep it, but not a
 * captured body replayed under a new `X-GitHub-Delivery`. To stop those, de-duplicate on the signed body (its
 * SHA-256, or a field of the payload) and keep the endpoint's secret and URL private, behind TLS.
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
