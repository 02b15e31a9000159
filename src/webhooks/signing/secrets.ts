import { createHash } from "node:crypto";
import { WebhookVerificationError } from "./errors";

/** One secret or several (key rotation: any listed secret may match). */
export type WebhookSecrets = string | readonly string[];

/**
 * A short, non-reversible fingerprint of a secret (first 8 hex digits of its SHA-256), printed in
 * verification messages so that developers can tell which secret was tried without logging it.
 *
 * @example secretFingerprint("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") // compare with the one in the error
 */
export function secretFingerprint(secret: string): string {
  return createHash("sha256").update(secret).digest("hex").slice(0, 8);
}

// Type markers that providers publish (Standard Webhooks, Shopify, Stripe API keys): naming one reveals nothing of the
// secret. Any other leading text is the secret itself: "hooks_2024" showed "hooks_", and the fingerprint gave the rest.
const PUBLIC_MARKER = /^(?:whsec_|whsk_|whpk_|shpss_|(?:sk|rk|pk)_(?:live|test)_)/;

/** `#1 whsec_… (fingerprint 1a2b3c4d)`: how a secret is named in messages, never any of its value. */
export function describeSecret(secret: string, index: number): string {
  const prefix = PUBLIC_MARKER.exec(secret)?.[0] ?? "";
  return `#${index + 1} ${prefix}… (fingerprint ${secretFingerprint(secret)})`;
}

const isAbsent = (secret: unknown) => secret === undefined || secret === null || secret === "";

/**
 * The secrets as a non-empty list of strings, or `secret_invalid` for a missing configuration (`undefined`, `null`,
 * an empty string or list: an unset environment variable). A value of another type is a programmer error: TypeError,
 * its message naming `caller`, the function the secrets were given to.
 */
export function secretList(
  secrets: unknown,
  scheme: string,
  caller = "verify",
): readonly string[] | WebhookVerificationError {
  if (typeof secrets === "string" && secrets.length > 0) return [secrets];
  const list: readonly unknown[] = Array.isArray(secrets) ? secrets : [secrets];
  for (const secret of list) {
    if (typeof secret !== "string" && !isAbsent(secret)) {
      throw new TypeError(
        `${caller}: secrets must be a string or a list of strings, not ${Array.isArray(secrets) ? "a list holding " : ""}${typeof secret}`,
      );
    }
  }
  if (list.length === 0) {
    return new WebhookVerificationError(
      "secret_invalid",
      "No secret was given to verify with: pass the endpoint's signing secret (or, while rotating, the current and previous ones).",
      { scheme },
    );
  }
  for (let index = 0; index < list.length; index++) {
    const secret = list[index];
    if (isAbsent(secret)) {
      const what = secret === "" ? "an empty string" : String(secret);
      return new WebhookVerificationError(
        "secret_invalid",
        `Secret #${index + 1} is ${what}: the signing secret is missing from the configuration (is the environment variable set and loaded?).`,
        { scheme },
      );
    }
  }
  return list as readonly string[];
}

/**
 * A bounded map from secret string to its decoded key: decoding and key import happen once per secret, not once per
 * delivery. The oldest entries leave first, through a ring of the secrets rather than from the front of the `Map`: V8
 * keeps a deleted `Map` entry as a hole until it rebuilds the table, so taking the oldest entry of a `Map` that keeps
 * churning walks every hole first.
 */
export class KeyCache<V> {
  readonly #entries = new Map<string, V>();
  readonly #order: string[] = [];
  readonly #limit: number;
  #next = 0;

  /**
   * @param limit the most secrets kept. The default covers a provider signing for 10,000 endpoints in turn: with
   * fewer slots than secrets in use, every signature decoded its key again (8 µs instead of 2 µs past 256 before).
   */
  constructor(limit = 10_000) {
    this.#limit = limit;
  }

  get(secret: string, decode: (secret: string) => V): V {
    const hit = this.#entries.get(secret);
    if (hit !== undefined) return hit;
    const value = decode(secret);
    if (this.#order.length < this.#limit) this.#order.push(secret);
    else {
      this.#entries.delete(this.#order[this.#next] as string);
      this.#order[this.#next] = secret;
      this.#next = (this.#next + 1) % this.#limit;
    }
    this.#entries.set(secret, value);
    return value;
  }
}
