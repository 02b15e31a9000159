import type { WebhookVerificationError } from "./errors";
import type { HeaderLookup } from "./headers";
import { hmacSha256, type RawBody } from "./hmac";
import { matchesLiteralHmac } from "./literal-hmac";
import { literalSigningKeys } from "./literal-keys";
import { stringMember } from "./payload";
import {
  malformedHeader,
  missingHeader,
  parseSeconds,
  type SchemeSignInput,
  type SignedHeaders,
  signingBody,
  signingSecrets,
  signingTimestamp,
  type WebhookScheme,
} from "./scheme";

const NAME = "stripe";
const HEADER = "stripe-signature";
const EXPECTED = "t=<unix seconds>,v1=<hex HMAC-SHA256>[,v1=…]";

// Stripe, "Verify webhook signatures manually": `Stripe-Signature: t=<ts>,v1=<sig>[,v1=<sig>][,v0=<sig>]`.
function read(header: HeaderLookup): SignedHeaders | WebhookVerificationError {
  const value = header(HEADER);
  if (value === undefined) return missingHeader(NAME, ["Stripe-Signature"]);
  let timestamp: number | undefined;
  let timestampText: string | undefined;
  const signatures: string[] = [];
  for (const item of value.split(",")) {
    const pair = item.trim();
    const equals = pair.indexOf("=");
    if (equals <= 0) return malformedHeader(NAME, "Stripe-Signature", value, EXPECTED);
    const key = pair.slice(0, equals);
    const text = pair.slice(equals + 1);
    if (key === "t") {
      timestamp = parseSeconds(text);
      timestampText = text;
      if (timestamp === undefined) return malformedHeader(NAME, "Stripe-Signature", value, EXPECTED);
    } else if (key === "v1") {
      signatures.push(text);
    }
  }
  // Step 1: "the v1 scheme"; v0 and other schemes are ignored.
  if (timestamp === undefined || signatures.length === 0)
    return malformedHeader(NAME, "Stripe-Signature", value, EXPECTED);
  return { id: undefined, timestamp, timestampText, signatures };
}

function matches(signed: SignedHeaders, body: RawBody, secrets: readonly string[]) {
  // Step 2: the signed payload is `${timestamp}.${body}`; the key is the whole `whsec_…` string.
  const prefix = `${signed.timestampText ?? signed.timestamp}.`;
  return matchesLiteralHmac(NAME, secrets, prefix, body, signed.signatures, "hex");
}

function signStripe(input: SchemeSignInput): Record<string, string> {
  const keys = literalSigningKeys(NAME, signingSecrets(NAME, input.secrets));
  const timestamp = signingTimestamp(NAME, input.timestamp);
  const signatures = keys.map((key) => `v1=${hmacSha256(key, `${timestamp}.`, signingBody(NAME, input.body), "hex")}`);
  return { [HEADER]: `t=${timestamp},${signatures.join(",")}` };
}

/**
 * Stripe's scheme: `Stripe-Signature: t=…,v1=…`, HMAC-SHA256 (hex) over `timestamp.body`. The key is the
 * endpoint secret as written, `whsec_…` included (unlike Standard Webhooks, which decodes it).
 *
 * @see https://docs.stripe.com/webhooks#verify-manually
 */
export const stripe = {
  name: NAME,
  signatureHeader: HEADER,
  secretForm: "whsec_… (the endpoint's signing secret, used as written)",
  read,
  matches,
  sign: signStripe,
  payloadId: (payload: unknown) => stringMember(payload, "id"),
} satisfies WebhookScheme;
