/**
 * Building Cache-Control field values (RFC 9111 §5.2) from typed directives.
 */
import {
  CACHE_CONTROL_DIRECTIVES,
  type CacheControl,
  type RequestCacheControl,
  type ResponseCacheControl,
} from "./cache-control";
import { CachingError } from "./errors";
import { isQuotable, isToken } from "./syntax";

const KNOWN: ReadonlySet<string> = new Set(CACHE_CONTROL_DIRECTIVES);

function fail(message: string): never {
  throw new CachingError("invalid_cache_control", message);
}

function delta(name: string, value: number): string {
  // §1.2.2: delta-seconds = 1*DIGIT.
  if (!Number.isSafeInteger(value) || value < 0) fail(`${name} must be a non-negative integer, got ${value}.`);
  return `${name}=${value}`;
}

function quote(value: string): string {
  let out = '"';
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (!isQuotable(c)) fail(`Cache-Control argument ${JSON.stringify(value)} cannot be a quoted-string.`);
    out += c === 0x22 || c === 0x5c ? `\\${value[i]}` : value[i];
  }
  return `${out}"`;
}

function names(directive: string, value: true | readonly string[]): string {
  if (value === true) return directive;
  // §5.2.2.4 / §5.2.2.7 qualify the directive "with one or more field names": `private=""` would be read back as the
  // whole response, which an empty list did not say either way.
  if (value.length === 0) {
    fail(`${directive} with a list names one field or more; pass true for the whole response, or leave it out.`);
  }
  for (const name of value) {
    if (!isToken(name)) throw new CachingError("invalid_field_name", `${JSON.stringify(name)} is not a field name.`);
  }
  // §5.2.2.4 / §5.2.2.7: the qualified form is a quoted-string, even for a single name.
  const unique = [...new Set(value.map((name) => name.toLowerCase()))];
  return `${directive}="${unique.join(", ")}"`;
}

/**
 * Formats Cache-Control directives as a field value, in a fixed order; the inverse of `parseCacheControl`.
 * @throws {CachingError} `invalid_cache_control` for a negative or fractional delta-seconds, an extension
 *   named like a standard directive or not a token, an argument that cannot be quoted, or an empty `noCache` /
 *   `private` list;
 *   `invalid_field_name` for a bad name in `noCache` / `private`.
 * @example formatCacheControl({ public: true, maxAge: 600, staleWhileRevalidate: 30 })
 * // "public, max-age=600, stale-while-revalidate=30"
 */
export function formatCacheControl(directives: CacheControl | ResponseCacheControl | RequestCacheControl): string {
  const cc = directives as CacheControl;
  const parts: string[] = [];
  if (cc.public === true) parts.push("public");
  if (cc.private !== undefined) parts.push(names("private", cc.private));
  if (cc.noCache !== undefined) parts.push(names("no-cache", cc.noCache));
  if (cc.noStore === true) parts.push("no-store");
  if (cc.noTransform === true) parts.push("no-transform");
  if (cc.mustRevalidate === true) parts.push("must-revalidate");
  if (cc.proxyRevalidate === true) parts.push("proxy-revalidate");
  if (cc.mustUnderstand === true) parts.push("must-understand");
  if (cc.immutable === true) parts.push("immutable");
  if (cc.maxAge !== undefined) parts.push(delta("max-age", cc.maxAge));
  if (cc.sMaxage !== undefined) parts.push(delta("s-maxage", cc.sMaxage));
  if (cc.staleWhileRevalidate !== undefined) parts.push(delta("stale-while-revalidate", cc.staleWhileRevalidate));
  if (cc.staleIfError !== undefined) parts.push(delta("stale-if-error", cc.staleIfError));
  if (cc.maxStale !== undefined) parts.push(cc.maxStale === true ? "max-stale" : delta("max-stale", cc.maxStale));
  if (cc.minFresh !== undefined) parts.push(delta("min-fresh", cc.minFresh));
  if (cc.onlyIfCached === true) parts.push("only-if-cached");
  if (cc.extensions !== undefined) {
    for (const [name, value] of Object.entries(cc.extensions)) {
      const lower = name.toLowerCase();
      if (!isToken(name) || KNOWN.has(lower)) fail(`${JSON.stringify(name)} is not a valid extension directive name.`);
      // §5.2: token form when the argument allows it, quoted-string otherwise.
      parts.push(value === true ? lower : isToken(value) ? `${lower}=${value}` : `${lower}=${quote(value)}`);
    }
  }
  return parts.join(", ");
}
