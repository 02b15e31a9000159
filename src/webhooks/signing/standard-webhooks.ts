import { sign as ed25519Sign, verify as ed25519Verify } from "node:crypto";
import type { WebhookVerificationError } from "./errors";
import type { HeaderLookup } from "./headers";
import { hmacSha256, type RawBody, sameSignature } from "./hmac";
import {
  invalidSecret,
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
import { PUBLIC_KEY_PREFIX, SECRET_PREFIX, SIGNING_KEY_PREFIX, type StandardKey, standardKey } from "./standard-keys";
import { isWebhookId } from "./webhook-id";

const NAME = "standard-webhooks";

/** The headers of one Standard Webhooks delivery attempt. */
export interface StandardWebhookHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
  [name: string]: string;
}

// Ed25519 signatures are 64 bytes in padded base64. v1 signatures are compared as text with our own
// (canonical) encoding; v1a ones are decoded, so only the canonical encoding is let through to decoding.
const V1A = /^[A-Za-z0-9+/]{85}[AQgw]==$/;

/**
 * The most distinct signatures of one version a delivery may carry. Standard Webhooks, "Signature scheme": the list
 * is there for zero-downtime secret rotation, and senders sign once per active secret — two while a rotation's old
 * secret lasts (Svix: 24 hours). Each v1a token costs one Ed25519 check per key, so an unauthenticated header full
 * of them (16 KiB holds ~160) must not be verified token by token.
 */
const MAX_SIGNATURES_PER_VERSION = 10;

const TOO_MANY = "too_many";

// The versions this scheme checks; tokens of any other are skipped unread, so the cap above is not spent on them.
const CHECKED_VERSIONS = new Set(["v1", "v1a"]);

/**
 * The distinct `<version>,<signature>` tokens of a webhook-signature value ("a space delimited list"), `undefined`
 * when there is none, or {@link TOO_MANY}. A token without a version or a signature (`v1abc`, `v1,`, bare base64) is
 * skipped like one of an unknown version: Standard Webhooks, "Webhook headers", has consumers "try to verify each
 * signature until one matches", and the reference libraries (standardwebhooks, svix) pass over what is not
 * `v1,<signature>`.
 */
function signatureTokens(value: string): string[] | typeof TOO_MANY | undefined {
  const parts = value.includes("\t") ? value.split(/[ \t]/) : value.split(" ");
  const tokens = new Set<string>();
  const perVersion = new Map<string, number>();
  // `token` is `<version>,<signature>` with its comma at `comma`; false once a version has too many.
  const add = (token: string, comma: number): boolean => {
    if (comma <= 0 || comma === token.length - 1 || tokens.has(token)) return true;
    const version = token.slice(0, comma);
    if (CHECKED_VERSIONS.has(version)) {
      const count = (perVersion.get(version) ?? 0) + 1;
      if (count > MAX_SIGNATURES_PER_VERSION) return false;
      perVersion.set(version, count);
    }
    tokens.add(token);
    return true;
  };
  for (const part of parts) {
    const comma = part.indexOf(",");
    if (comma === -1) continue;
    // One field line's token, the common case.
    if (part.indexOf(",", comma + 1) === -1) {
      if (!add(part, comma)) return TOO_MANY;
      continue;
    }
    // RFC 9110 §5.3: repeated field lines are joined by a comma and optional whitespace, so one part can end one
    // line and start the next ("v1,a,v1,b" from a bare "," join; "v1,a," from ", "); §5.6.1: the empty list elements
    // a join of an empty line leaves ("v1,a,,v1,b") are ignored. Base64 has no comma: pieces pair up as version and
    // signature.
    const pieces = part.split(",");
    for (let index = 0; index < pieces.length; index++) {
      const version = pieces[index] as string;
      if (version === "") continue;
      const signature = pieces[++index] ?? "";
      if (!add(`${version},${signature}`, version.length)) return TOO_MANY;
    }
  }
  return tokens.size === 0 ? undefined : [...tokens];
}

function read(header: HeaderLookup): SignedHeaders | WebhookVerificationError {
  // Svix deliveries name the same headers svix-id, svix-timestamp, svix-signature; the svix package reads both.
  const id = header("webhook-id") ?? header("svix-id");
  const timestampText = header("webhook-timestamp") ?? header("svix-timestamp");
  const signature = header("webhook-signature") ?? header("svix-signature");
  if (id === undefined || timestampText === undefined || signature === undefined) {
    const absent = [
      id === undefined ? "webhook-id" : "",
      timestampText === undefined ? "webhook-timestamp" : "",
      signature === undefined ? "webhook-signature" : "",
    ];
    return missingHeader(NAME, absent.filter(Boolean));
  }
  // Standard Webhooks, "Signature scheme": the id must not contain "." (it delimits the signed content).
  if (id.length === 0 || id.includes(".")) {
    return malformedHeader(NAME, "webhook-id", id, "a non-empty message id without '.'");
  }
  const timestamp = parseSeconds(timestampText);
  if (timestamp === undefined) {
    return malformedHeader(NAME, "webhook-timestamp", timestampText, "integer Unix seconds, e.g. 1674087231");
  }
  const signatures = signatureTokens(signature);
  if (signatures === undefined) {
    // Nothing of the form `<version>,<signature>` at all: a header that cannot hold a signature, not a wrong one.
    return malformedHeader(NAME, "webhook-signature", signature, "space-separated `v1,<base64>` signatures");
  }
  if (signatures === TOO_MANY) {
    const expected = `at most ${MAX_SIGNATURES_PER_VERSION} distinct signatures of each version`;
    return malformedHeader(NAME, "webhook-signature", signature, expected);
  }
  return { id, timestamp, timestampText, signatures };
}

function matches(signed: SignedHeaders, body: RawBody, secrets: readonly string[]) {
  const keys: StandardKey[] = [];
  for (let index = 0; index < secrets.length; index++) {
    const key = standardKey(secrets[index]!);
    if (key.kind === "invalid") return invalidSecret(NAME, secrets[index]!, index, key.reason);
    keys.push(key);
  }
  // Standard Webhooks, "Signature scheme": the signed content is `{msg_id}.{timestamp}.{payload}`.
  const prefix = `${signed.id}.${signed.timestampText ?? signed.timestamp}.`;
  let content: Buffer | undefined;
  for (const key of keys) {
    if (key.kind === "hmac") {
      const expected = hmacSha256(key.key, prefix, body, "base64");
      for (const token of signed.signatures) {
        if (token.startsWith("v1,") && sameSignature(expected, token.slice(3))) return true;
      }
    } else if (key.kind === "ed25519") {
      for (const token of signed.signatures) {
        if (!token.startsWith("v1a,")) continue;
        const signature = token.slice(4);
        if (!V1A.test(signature)) continue;
        // Ed25519 (RFC 8032) is not streaming: the content is assembled once, for the first v1a candidate.
        content ??= Buffer.concat([Buffer.from(prefix), typeof body === "string" ? Buffer.from(body) : body]);
        if (ed25519Verify(null, content, key.publicKey, Buffer.from(signature, "base64"))) return true;
      }
    }
  }
  return false;
}

function signStandard(input: SchemeSignInput): StandardWebhookHeaders {
  const secrets = signingSecrets(NAME, input.secrets);
  const { id } = input;
  const body = signingBody(NAME, input.body);
  // An id the transport changes (trimmed) or refuses could never be verified: the signature covers it as given.
  if (!isWebhookId(id)) {
    throw new TypeError(
      `${NAME}.sign: id must be a non-empty header value without '.': visible characters, no leading or trailing whitespace, no control characters`,
    );
  }
  const timestamp = signingTimestamp(NAME, input.timestamp);
  const prefix = `${id}.${timestamp}.`;
  const signatures = secrets.map((secret) => {
    const key = standardKey(secret);
    if (key.kind === "hmac") return `v1,${hmacSha256(key.key, prefix, body, "base64")}`;
    if (key.kind === "ed25519" && key.privateKey !== undefined) {
      const content = Buffer.concat([Buffer.from(prefix), typeof body === "string" ? Buffer.from(body) : body]);
      return `v1a,${ed25519Sign(null, content, key.privateKey).toString("base64")}`;
    }
    const reason =
      key.kind === "ed25519"
        ? `is a public key (${PUBLIC_KEY_PREFIX}); sign with the ${SIGNING_KEY_PREFIX} key`
        : key.reason;
    throw new TypeError(`${NAME}.sign: the secret ${reason}`);
  });
  // Verifiers (ours included) refuse a header with more distinct signatures of one version than that, unverified.
  // Only more signatures than that in all can hold more of one version: counted then, not on every delivery's
  // signing (bench/delivery, the loop signing each request: `buildDeliveryRequest` took ~0.45 µs of ~3.9 for it).
  if (signatures.length > MAX_SIGNATURES_PER_VERSION) {
    for (const version of ["v1,", "v1a,"]) {
      if (new Set(signatures.filter((token) => token.startsWith(version))).size > MAX_SIGNATURES_PER_VERSION) {
        throw new TypeError(
          `${NAME}.sign: at most ${MAX_SIGNATURES_PER_VERSION} distinct secrets of each kind may sign one delivery; verifiers refuse more`,
        );
      }
    }
  }
  return { "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": signatures.join(" ") };
}

/**
 * The Standard Webhooks scheme (the default): `webhook-id`, `webhook-timestamp` and `webhook-signature`
 * headers; `v1,` HMAC-SHA256 signatures with `whsec_` secrets and `v1a,` Ed25519 signatures with
 * `whsk_` (sign) / `whpk_` (verify) keys.
 *
 * @see https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
 */
export const standardWebhooks = {
  name: NAME,
  signatureHeader: "webhook-signature",
  secretForm: `${SECRET_PREFIX}<base64> (HMAC), or ${PUBLIC_KEY_PREFIX}<base64> / ${SIGNING_KEY_PREFIX}<base64> (Ed25519)`,
  read,
  matches,
  sign: signStandard,
} satisfies WebhookScheme;
