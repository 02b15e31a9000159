/**
 * Parsing Cache-Control, RFC 9111 §5.2:
 *   Cache-Control   = #cache-directive
 *   cache-directive = token [ "=" ( token / quoted-string ) ]
 * Names compare case-insensitively; both argument forms are accepted for every directive that takes an argument
 * (§5.2).
 */
import { type CacheControl, DELTA_SECONDS_MAX } from "./cache-control";
import { isOws, isQdtext, isQuotable, isTchar, isToken, nextComma, trimOws } from "./syntax";

type Mutable = { -readonly [K in keyof CacheControl]: CacheControl[K] };
type DeltaName = "maxAge" | "sMaxage" | "minFresh" | "staleWhileRevalidate" | "staleIfError";
type FlagName = "noStore" | "noTransform" | "onlyIfCached" | "mustRevalidate" | "proxyRevalidate";
type GrantName = "public" | "immutable" | "mustUnderstand";

const DELTAS = new Map<string, DeltaName>([
  ["max-age", "maxAge"],
  ["s-maxage", "sMaxage"],
  ["min-fresh", "minFresh"],
  ["stale-while-revalidate", "staleWhileRevalidate"],
  ["stale-if-error", "staleIfError"],
]);

// Directives without an argument (§5.2) that restrict what a cache may do.
const FLAGS = new Map<string, FlagName>([
  ["no-store", "noStore"],
  ["no-transform", "noTransform"],
  ["only-if-cached", "onlyIfCached"],
  ["must-revalidate", "mustRevalidate"],
  ["proxy-revalidate", "proxyRevalidate"],
]);

// Directives without an argument (§5.2; RFC 8246 §2) that only let a cache do more: store what it otherwise may not
// (public, §5.2.2.9, §3.5), skip revalidation (immutable), ignore no-store (must-understand, §5.2.2.3).
const GRANTS = new Map<string, GrantName>([
  ["public", "public"],
  ["immutable", "immutable"],
  ["must-understand", "mustUnderstand"],
]);

/**
 * delta-seconds = 1*DIGIT (§1.2.2), clamped to 2147483648; `undefined` when not digits.
 * @example parseDeltaSeconds("99999999999") // 2147483648
 */
export function parseDeltaSeconds(value: string): number | undefined {
  if (value.length === 0) return undefined;
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const d = value.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return undefined;
    n = n * 10 + d;
    if (n > DELTA_SECONDS_MAX) n = DELTA_SECONDS_MAX;
  }
  return n;
}

// A field-name list argument of no-cache / private (§5.2.2.4, §5.2.2.7), lower-cased; `undefined` when malformed.
function fieldNames(value: string): string[] | undefined {
  const names: string[] = [];
  for (const part of value.split(",")) {
    // §5.6.1.2: OWS around each name, nothing else (a name ending in NBSP is malformed).
    const name = trimOws(part);
    if (name === "") continue;
    if (!isToken(name)) return undefined;
    names.push(name.toLowerCase());
  }
  return names;
}

// The names each field-name list holds so far: a Set keeps merging linear in the number of names, however many
// times the directive repeats.
interface SeenNames {
  noCache?: Set<string>;
  private?: Set<string>;
  // Grants sent with an argument once: no other occurrence grants them.
  revoked?: Set<GrantName>;
}

// Duplicates and invalid values resolve to the most restrictive reading (§4.2.1).
function mergeDelta(cc: Mutable, key: DeltaName, raw: string | true): void {
  const value = raw === true ? undefined : parseDeltaSeconds(raw);
  const previous = cc[key];
  if (key === "minFresh") {
    // A larger min-fresh is stricter; an unusable one is dropped rather than guessed.
    if (value !== undefined) cc.minFresh = previous === undefined ? value : Math.max(previous, value);
    return;
  }
  if (key === "maxAge" || key === "sMaxage") {
    // §4.2.1: invalid freshness information (or conflicting duplicates) should make the response stale.
    cc[key] = value === undefined || (previous !== undefined && previous !== value) ? 0 : value;
    return;
  }
  // stale-while-revalidate / stale-if-error: less staleness is stricter; unusable means none.
  const next = value ?? 0;
  cc[key] = previous === undefined ? next : Math.min(previous, next);
}

function mergeMaxStale(cc: Mutable, raw: string | true): void {
  // §5.2.1.2: no argument accepts any staleness; a number bounds it; an unusable one is ignored.
  const value = raw === true ? true : parseDeltaSeconds(raw);
  if (value === undefined) return;
  const previous = cc.maxStale;
  if (previous === undefined || previous === true) cc.maxStale = value;
  else if (value !== true) cc.maxStale = Math.min(previous, value);
}

function mergeList(cc: Mutable, seen: SeenNames, key: "noCache" | "private", raw: string | true): void {
  // The unqualified form covers the whole response, so it wins over any list. §5.2.2.4, §5.2.2.7 qualify it only
  // "with one or more field names": a list naming none (`private=""`) is the unqualified form, not "nothing private".
  const names = raw === true ? undefined : fieldNames(raw);
  if (names === undefined || names.length === 0 || cc[key] === true) {
    cc[key] = true;
    return;
  }
  const list = (cc[key] as string[] | undefined) ?? [];
  const set = seen[key] ?? new Set<string>();
  cc[key] = list;
  seen[key] = set;
  // First occurrence order, each name once.
  for (const name of names) {
    if (!set.has(name)) {
      set.add(name);
      list.push(name);
    }
  }
}

function mergeGrant(cc: Mutable, seen: SeenNames, key: GrantName, raw: string | true): void {
  if (raw === true) {
    if (seen.revoked?.has(key) !== true) cc[key] = true;
    return;
  }
  seen.revoked ??= new Set();
  seen.revoked.add(key);
  delete cc[key];
}

// An argument no directive accepts: fails delta-seconds and field-name validation alike.
const INVALID = "\u0000";

function isKnown(name: string): boolean {
  return (
    DELTAS.has(name) ||
    FLAGS.has(name) ||
    GRANTS.has(name) ||
    name === "max-stale" ||
    name === "no-cache" ||
    name === "private"
  );
}

function apply(cc: Mutable, seen: SeenNames, name: string, raw: string | true): void {
  const delta = DELTAS.get(name);
  const flag = FLAGS.get(name);
  const grant = GRANTS.get(name);
  if (delta !== undefined) mergeDelta(cc, delta, raw);
  // §5.2: these take no argument; one sent anyway does not cancel a restriction (§4.2.1: the most restrictive reading).
  else if (flag !== undefined) cc[flag] = true;
  // ...and grants nothing, in any occurrence: `public=x` must not let a shared cache store an authorized response.
  else if (grant !== undefined) mergeGrant(cc, seen, grant, raw);
  else if (name === "max-stale") mergeMaxStale(cc, raw);
  else if (name === "no-cache") mergeList(cc, seen, "noCache", raw);
  else if (name === "private") mergeList(cc, seen, "private", raw);
  else {
    // §5.2.3: unrecognised directives are kept for the caller; the first occurrence wins.
    const extensions: Record<string, string | true> =
      (cc.extensions as Record<string, string | true> | undefined) ?? Object.create(null);
    cc.extensions = extensions;
    if (!(name in extensions)) extensions[name] = raw;
  }
}

// Reads a quoted-string whose opening quote is at `start`; returns [unescaped, index after] or undefined.
function quotedString(value: string, start: number): [string, number] | undefined {
  let out = "";
  let from = start + 1;
  for (let i = start + 1; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x22) return [out + value.slice(from, i), i + 1];
    if (c === 0x5c) {
      if (i + 1 >= value.length || !isQuotable(value.charCodeAt(i + 1))) return undefined;
      out += value.slice(from, i);
      from = i + 1;
      i++;
    } else if (!isQdtext(c)) return undefined;
  }
  return undefined;
}

/**
 * Where a malformed member starting at `from` ends: the next comma outside a quoted-string, which is one value with
 * its commas (RFC 9110 §5.6.4), escapes included. A quoted-string never closed cannot say where it ends: the next comma
 * after its quote does, so it hides no directive that follows (`x="oops, no-store`).
 */
function memberEnd(value: string, from: number): number {
  for (let i = from; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x2c) return i;
    if (c !== 0x22) continue;
    let close = i + 1;
    while (close < value.length && value.charCodeAt(close) !== 0x22) close += value.charCodeAt(close) === 0x5c ? 2 : 1;
    if (close >= value.length) return nextComma(value, i);
    i = close;
  }
  return value.length;
}

/**
 * Parses a Cache-Control field value. Never throws: a malformed member (up to the next comma outside a quoted-string)
 * is skipped and the others apply, duplicates (names in any case) and invalid values take the most restrictive reading
 * (§4.2.1), delta-seconds over 2147483648 are clamped (§1.2.2).
 * @example parseCacheControl("public, max-age=60") // { public: true, maxAge: 60 }
 * @see https://www.rfc-editor.org/rfc/rfc9111#section-5.2
 */
export function parseCacheControl(value: string | undefined): CacheControl {
  const cc: Mutable = {};
  if (value === undefined) return cc;
  const seen: SeenNames = {};
  const n = value.length;
  let i = 0;
  while (i < n) {
    const c = value.charCodeAt(i);
    if (c === 0x2c || isOws(c)) {
      i++;
      continue;
    }
    const nameStart = i;
    while (i < n && isTchar(value.charCodeAt(i))) i++;
    if (i === nameStart) {
      i = memberEnd(value, i);
      continue;
    }
    const name = value.slice(nameStart, i).toLowerCase();
    let raw: string | true = true;
    let malformed = false;
    if (value.charCodeAt(i) === 0x3d /* = */) {
      if (value.charCodeAt(i + 1) === 0x22) {
        const quoted = quotedString(value, i + 1);
        if (quoted === undefined) malformed = true;
        else [raw, i] = quoted;
      } else {
        const argStart = i + 1;
        i = argStart;
        while (i < n && isTchar(value.charCodeAt(i))) i++;
        raw = value.slice(argStart, i);
        // token = 1*tchar (RFC 9110 §5.6.2): `private=` is malformed, not an empty field-name list.
        malformed = i === argStart;
      }
    }
    if (!malformed) {
      while (i < n && isOws(value.charCodeAt(i))) i++;
      malformed = i < n && value.charCodeAt(i) !== 0x2c;
    }
    if (malformed) {
      i = memberEnd(value, i);
      // A known directive with a broken argument still counts, read as invalid: the most restrictive reading.
      if (!isKnown(name)) continue;
      raw = INVALID;
    }
    apply(cc, seen, name, raw);
  }
  return cc;
}
