/**
 * Generating entity tags. A strong tag must change whenever the representation's bytes change
 * (RFC 9110 §8.8.3), so it is derived from the bytes; a weak tag may come from a version or a time.
 */
import * as nodeCrypto from "node:crypto";
import { describeOption } from "../options/refuse-option";
import { isValidTagText } from "./entity-tag";
import { CachingError } from "./errors";
import { timeValue } from "./time-value";

type Body = Uint8Array | string;

// crypto.hash (Node 20.12+) hashes in one native call; older runtimes take the createHash path.
const oneShot: ((algorithm: string, data: Body, encoding: "base64url") => string) | undefined =
  typeof nodeCrypto.hash === "function"
    ? (nodeCrypto.hash as (a: string, d: Body, e: "base64url") => string)
    : undefined;

function sha1Base64url(body: Body): string {
  if (oneShot !== undefined) return oneShot("sha1", body, "base64url");
  return nodeCrypto.createHash("sha1").update(body).digest("base64url");
}

/** Options for {@link etagFromBody}. */
export interface EtagFromBodyOptions {
  /**
   * Mark the tag weak (`W/"…"`).
   * @default false
   */
  weak?: boolean;
}

/**
 * A strong entity tag for a representation's bytes: the SHA-1 of the body in base64url (27 characters,
 * 160 bits), e.g. `"2jmj7l5rSw0yVb_vlWAYkK_YBwk"`. Strings are hashed as UTF-8.
 *
 * SHA-1 because it is the fastest digest in node:crypto on current CPUs (hardware SHA extensions) and its
 * accidental-collision probability is negligible; a deliberate collision needs an attacker who controls two
 * versions of the same resource, which an ETag cannot defend against anyway.
 * @example etagFromBody('{"id":1}') // '"…27 characters…"'
 */
export function etagFromBody(body: Body, options?: EtagFromBodyOptions): string {
  const tag = `"${sha1Base64url(body)}"`;
  return options?.weak === true ? `W/${tag}` : tag;
}

/** Options for {@link etagFromVersion} and {@link etagFromTime}. */
export interface VersionTagOptions {
  /**
   * Make the tag weak. Keep the default unless the version pins the exact bytes of every representation:
   * If-Match (§13.1.1) uses strong comparison, so a weak tag never satisfies it.
   * @default true
   */
  weak?: boolean;
}

/**
 * An entity tag from a version number or opaque version string: `W/"42"` (weak by default).
 * @throws {CachingError} `invalid_version` for a non-integer number, a string with characters outside etagc, or a
 *   value of another type (`undefined`, `null`).
 * @example etagFromVersion(42) // 'W/"42"'
 */
export function etagFromVersion(version: number | bigint | string, options?: VersionTagOptions): string {
  // String(undefined) would tag every version W/"undefined" alike: a stale copy would then revalidate as current.
  if (typeof version !== "number" && typeof version !== "bigint" && typeof version !== "string") {
    throw new CachingError(
      "invalid_version",
      `etagFromVersion: version must be an integer, a bigint or a string, got ${describeOption(version)}.`,
    );
  }
  if (typeof version === "number" && !Number.isSafeInteger(version)) {
    throw new CachingError("invalid_version", `Version ${version} is not a safe integer.`);
  }
  const tag = String(version);
  if (typeof version === "string" && !isValidTagText(version)) {
    throw new CachingError("invalid_version", `Version ${JSON.stringify(version)} has a character outside etagc.`);
  }
  return options?.weak === false ? `"${tag}"` : `W/"${tag}"`;
}

/**
 * An entity tag from a modification time in milliseconds, base 36: `W/"lr3x9k2p"` (weak by default).
 * Finer than Last-Modified, which only resolves whole seconds (§8.8.2).
 * @throws {CachingError} `invalid_date` for an invalid Date or non-finite number.
 * @example etagFromTime(new Date("2024-01-01T00:00:00Z")) // 'W/"lqu5m2o0"'
 */
export function etagFromTime(time: Date | number, options?: VersionTagOptions): string {
  const ms = timeValue("etagFromTime", time);
  if (!Number.isFinite(ms)) throw new CachingError("invalid_date", `Time ${String(time)} is not a valid date.`);
  const tag = Math.trunc(ms).toString(36);
  return options?.weak === false ? `"${tag}"` : `W/"${tag}"`;
}
