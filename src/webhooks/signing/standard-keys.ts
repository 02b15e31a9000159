import { createPrivateKey, createPublicKey, createSecretKey, type KeyObject, randomBytes } from "node:crypto";
import { requiredFunction } from "../../options/function-option";
import { KeyCache } from "./secrets";

/** Standard Webhooks secret serialisation: `whsec_` (HMAC), `whsk_` / `whpk_` (Ed25519 secret / public key). */
export const SECRET_PREFIX = "whsec_";
export const SIGNING_KEY_PREFIX = "whsk_";
export const PUBLIC_KEY_PREFIX = "whpk_";

// Standard Webhooks, "Signature scheme" table: symmetric secrets are at least 24 bytes, 512 bits at most.
export const MIN_SECRET_BYTES = 24;
export const MAX_SECRET_BYTES = 64;

// DER headers of an Ed25519 key (RFC 8410 §7 PKCS#8 private key, §4 SubjectPublicKeyInfo) before the 32 raw bytes.
const PKCS8_ED25519 = Buffer.from("302e020100300506032b657004220420", "hex");
const SPKI_ED25519 = Buffer.from("302a300506032b6570032100", "hex");

/** A decoded Standard Webhooks secret. */
export type StandardKey =
  | { readonly kind: "hmac"; readonly key: KeyObject }
  | { readonly kind: "ed25519"; readonly publicKey: KeyObject; readonly privateKey: KeyObject | undefined }
  | { readonly kind: "invalid"; readonly reason: string };

/** A source of random bytes: `randomBytes(n)` returns `n` fresh random bytes. @default node:crypto's randomBytes */
export type RandomBytes = (size: number) => Uint8Array;

const systemRandomBytes: RandomBytes = (size) => randomBytes(size);

function freshBytes(source: RandomBytes, size: number, caller: string): Buffer {
  requiredFunction(caller, "randomBytes", source);
  const bytes = source(size);
  if (!(bytes instanceof Uint8Array) || bytes.length !== size) {
    throw new TypeError(`${caller}: randomBytes(${size}) must return ${size} bytes`);
  }
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * A new Standard Webhooks signing secret: `whsec_` + base64 of `bytes` random bytes from node:crypto.
 *
 * @param bytes key length; Standard Webhooks allows 24–64. @default 32
 * @param random the random source (inject one for reproducible tests). @default node:crypto's randomBytes
 * @example const secret = generateSecret(); // "whsec_…" — store it, show it to the consumer once
 */
export function generateSecret(bytes = 32, random: RandomBytes = systemRandomBytes): string {
  if (!Number.isInteger(bytes) || bytes < MIN_SECRET_BYTES || bytes > MAX_SECRET_BYTES) {
    throw new RangeError(`generateSecret: bytes must be an integer in ${MIN_SECRET_BYTES}..${MAX_SECRET_BYTES}`);
  }
  return SECRET_PREFIX + freshBytes(random, bytes, "generateSecret").toString("base64");
}

/** An Ed25519 key pair for the asymmetric `v1a` signatures, in Standard Webhooks serialisation. */
export interface SigningKeyPair {
  /** `whsk_` + base64 of the 32-byte private key (RFC 8032 seed): the provider signs with it. */
  readonly secretKey: string;
  /** `whpk_` + base64 of the 32-byte public key: consumers verify with it. */
  readonly publicKey: string;
}

/**
 * A new Ed25519 key pair for `v1a` signatures: the private key is a 32-byte random seed (RFC 8032 §5.1.5).
 *
 * @param random the random source of the seed (inject one for reproducible tests). @default node:crypto's randomBytes
 * @example const { secretKey, publicKey } = generateSigningKeyPair(); // sign with secretKey, publish publicKey
 */
export function generateSigningKeyPair(random: RandomBytes = systemRandomBytes): SigningKeyPair {
  const seed = freshBytes(random, 32, "generateSigningKeyPair");
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: "der", type: "pkcs8" });
  const raw = createPublicKey(privateKey).export({ format: "der", type: "spki" }).subarray(SPKI_ED25519.length);
  return {
    secretKey: SIGNING_KEY_PREFIX + seed.toString("base64"),
    publicKey: PUBLIC_KEY_PREFIX + raw.toString("base64"),
  };
}

// RFC 4648 §4 base64, padded or not (some providers drop the padding).
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function decodeBase64(text: string): Buffer | undefined {
  if (!BASE64.test(text)) return undefined;
  const data = text.replace(/=+$/, "");
  if (data.length % 4 === 1 || (data.length !== text.length && text.length % 4 !== 0)) return undefined;
  return Buffer.from(data, "base64");
}

function invalid(reason: string): StandardKey {
  return { kind: "invalid", reason };
}

function decodeEd25519(secret: string, isPrivate: boolean): StandardKey {
  const prefix = isPrivate ? SIGNING_KEY_PREFIX : PUBLIC_KEY_PREFIX;
  const bytes = decodeBase64(secret.slice(prefix.length));
  // A 64-byte secret key is the libsodium form: seed followed by the public key.
  if (bytes === undefined || !(bytes.length === 32 || (isPrivate && bytes.length === 64))) {
    const what = isPrivate ? "32-byte Ed25519 seed" : "32-byte Ed25519 public key";
    return invalid(`is not ${prefix} followed by the base64 of a ${what}`);
  }
  if (!isPrivate) {
    const spki = Buffer.concat([SPKI_ED25519, bytes]);
    return {
      kind: "ed25519",
      publicKey: createPublicKey({ key: spki, format: "der", type: "spki" }),
      privateKey: undefined,
    };
  }
  const pkcs8 = Buffer.concat([PKCS8_ED25519, bytes.subarray(0, 32)]);
  const privateKey = createPrivateKey({ key: pkcs8, format: "der", type: "pkcs8" });
  const publicKey = createPublicKey(privateKey);
  if (bytes.length === 64) {
    const raw = publicKey.export({ format: "der", type: "spki" }).subarray(SPKI_ED25519.length);
    if (!raw.equals(bytes.subarray(32)))
      return invalid("is a 64-byte Ed25519 secret key whose public half does not match its seed");
  }
  return { kind: "ed25519", publicKey, privateKey };
}

function decodeStandardSecret(secret: string): StandardKey {
  if (/\s/.test(secret))
    return invalid(
      "contains whitespace (often a newline from a .env file or a secrets mount): trim it where it is loaded",
    );
  if (secret.startsWith(SIGNING_KEY_PREFIX) || secret.startsWith(PUBLIC_KEY_PREFIX)) {
    const isPrivate = secret.startsWith(SIGNING_KEY_PREFIX);
    try {
      return decodeEd25519(secret, isPrivate);
    } catch (error) {
      // OpenSSL refuses bytes that are not a key (e.g. not a point on the curve).
      return invalid(`is not a usable Ed25519 key (${error instanceof Error ? error.message : String(error)})`);
    }
  }
  if (/^(sk|rk|pk)_(live|test)_/.test(secret)) {
    return invalid("looks like a Stripe API key, not a webhook signing secret (whsec_…)");
  }
  // Without the prefix the secret is taken as bare base64, as the reference libraries do.
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = decodeBase64(encoded);
  if (key === undefined || key.length === 0) {
    return invalid(
      "is not whsec_ followed by base64 (Standard Webhooks secrets look like generateSecret()'s output); a literal secret belongs to another scheme (github, slack, shopify, stripe)",
    );
  }
  return { kind: "hmac", key: createSecretKey(key) };
}

const cache = new KeyCache<StandardKey>();

/** The decoded key of a Standard Webhooks secret (cached per secret string). */
export function standardKey(secret: string): StandardKey {
  return cache.get(secret, decodeStandardSecret);
}
