/**
 * Entity tags, RFC 9110 §8.8.3:
 *   ETag       = entity-tag
 *   entity-tag = [ weak ] opaque-tag
 *   weak       = %s"W/"
 *   opaque-tag = DQUOTE *etagc DQUOTE
 *   etagc      = %x21 / %x23-7E / obs-text
 */
import { describeOption } from "../options/refuse-option";
import { CachingError } from "./errors";
import { isEtagc, isOws, nextComma } from "./syntax";

/** A parsed entity tag: `tag` is the text between the double quotes. */
export interface EntityTag {
  readonly weak: boolean;
  readonly tag: string;
}

/** The value of If-Match / If-None-Match (§13.1.1, §13.1.2): `"*"` or a list of entity tags. */
export type EntityTagList = "*" | readonly EntityTag[];

/** Whether every character of `tag` is an etagc (§8.8.3). */
export function isValidTagText(tag: string): boolean {
  for (let i = 0; i < tag.length; i++) if (!isEtagc(tag.charCodeAt(i))) return false;
  return true;
}

/**
 * Reads one entity-tag starting at `start`; returns the index just past its closing quote, or -1.
 * A member is only valid when everything between the quotes is etagc.
 */
export function scanEntityTag(value: string, start: number): number {
  let i = start;
  if (value.charCodeAt(i) === 0x57 /* W */) {
    if (value.charCodeAt(i + 1) !== 0x2f /* / */) return -1;
    i += 2;
  }
  if (value.charCodeAt(i) !== 0x22) return -1;
  const close = value.indexOf('"', i + 1);
  if (close === -1) return -1;
  for (let j = i + 1; j < close; j++) if (!isEtagc(value.charCodeAt(j))) return -1;
  return close + 1;
}

function trimmedBounds(value: string): [number, number] {
  let start = 0;
  let end = value.length;
  while (start < end && isOws(value.charCodeAt(start))) start++;
  while (end > start && isOws(value.charCodeAt(end - 1))) end--;
  return [start, end];
}

/**
 * Parses one entity-tag (surrounding whitespace allowed); `undefined` when it is not valid.
 * @example parseEntityTag('W/"v2"') // { weak: true, tag: "v2" }
 */
export function parseEntityTag(value: string): EntityTag | undefined {
  const [start, end] = trimmedBounds(value);
  if (scanEntityTag(value, start) !== end) return undefined;
  const weak = value.charCodeAt(start) === 0x57;
  return { weak, tag: value.slice(start + (weak ? 3 : 1), end - 1) };
}

/**
 * Formats an entity tag for an ETag, If-Match or If-None-Match field.
 * @throws {CachingError} `invalid_entity_tag` when `tag` holds a character outside etagc (§8.8.3).
 * @example formatEntityTag({ weak: false, tag: "abc" }) // '"abc"'
 */
export function formatEntityTag(entityTag: EntityTag): string {
  if (!isValidTagText(entityTag.tag)) {
    throw new CachingError(
      "invalid_entity_tag",
      `Entity tag ${JSON.stringify(entityTag.tag)} has a character outside etagc.`,
    );
  }
  return entityTag.weak ? `W/"${entityTag.tag}"` : `"${entityTag.tag}"`;
}

/**
 * Parses an If-Match / If-None-Match value strictly (`"*" / #entity-tag`, §13.1.1); `undefined` when any
 * member is malformed. Empty list elements are skipped as §5.6.1 requires.
 * @example parseEntityTagList('"a", W/"b"') // [{ weak: false, tag: "a" }, { weak: true, tag: "b" }]
 */
export function parseEntityTagList(value: string): EntityTagList | undefined {
  const [start, end] = trimmedBounds(value);
  if (end - start === 1 && value.charCodeAt(start) === 0x2a /* * */) return "*";
  const tags: EntityTag[] = [];
  let i = start;
  while (i < end) {
    const c = value.charCodeAt(i);
    if (c === 0x2c || isOws(c)) {
      i++;
      continue;
    }
    const after = scanEntityTag(value, i);
    if (after === -1) return undefined;
    const weak = c === 0x57;
    tags.push({ weak, tag: value.slice(i + (weak ? 3 : 1), after - 1) });
    i = after;
    while (i < end && isOws(value.charCodeAt(i))) i++;
    if (i < end && value.charCodeAt(i) !== 0x2c) return undefined;
  }
  return tags;
}

/**
 * Formats an If-Match / If-None-Match value: `*`, or the tags joined with ", "; the inverse of
 * {@link parseEntityTagList}.
 *
 * @param list `"*"` or the entity tags to list.
 * @throws {CachingError} `invalid_entity_tag` when a tag holds a character outside etagc (§8.8.3).
 * @example formatEntityTagList([{ weak: false, tag: "a" }, { weak: true, tag: "b" }]) // '"a", W/"b"'
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13.1.1 (If-Match) and §13.1.2 (If-None-Match)
 */
export function formatEntityTagList(list: EntityTagList): string {
  if (list === "*") return "*";
  return list.map(formatEntityTag).join(", ");
}

function toEntityTag(value: EntityTag | string): EntityTag | undefined {
  return typeof value === "string" ? parseEntityTag(value) : value;
}

/**
 * Strong comparison (§8.8.3.2): both tags strong and their opaque-tags identical. A string that is
 * not a valid entity-tag matches nothing.
 * @example strongCompare('"1"', '"1"') // true;  strongCompare('W/"1"', '"1"') // false
 */
export function strongCompare(a: EntityTag | string, b: EntityTag | string): boolean {
  const x = toEntityTag(a);
  const y = toEntityTag(b);
  return x !== undefined && y !== undefined && !x.weak && !y.weak && x.tag === y.tag;
}

/**
 * Weak comparison (§8.8.3.2): the opaque-tags are identical, whichever is weak.
 * @example weakCompare('W/"1"', '"1"') // true
 */
export function weakCompare(a: EntityTag | string, b: EntityTag | string): boolean {
  const x = toEntityTag(a);
  const y = toEntityTag(b);
  return x !== undefined && y !== undefined && x.tag === y.tag;
}

/**
 * The lenient list scan used when evaluating preconditions: a malformed member matches nothing instead of
 * voiding the field, and ends at its first comma, so the rest of the list still counts. Both comparisons
 * split the field the same way. `opaque` is the current opaque-tag with its quotes; a member that equals it
 * needs no character check of its own once `opaque` itself is known valid.
 * @param strong §13.1.1 If-Match uses strong comparison; §13.1.2 If-None-Match weak.
 */
export function listMatches(field: string, opaque: string, currentWeak: boolean, strong: boolean): boolean {
  if (strong && currentWeak) return false;
  const n = field.length;
  const length = opaque.length;
  let i = 0;
  while (i < n) {
    const c = field.charCodeAt(i);
    if (c === 0x2c || c === 0x20 || c === 0x09) {
      i++;
      continue;
    }
    const weak = c === 0x57 /* W */ && field.charCodeAt(i + 1) === 0x2f;
    const start = weak ? i + 2 : i;
    const close = field.charCodeAt(start) === 0x22 ? field.indexOf('"', start + 1) : -1;
    if (close === -1) {
      // Malformed: the member ends at its first comma (§5.6.1) and the rest of the list still counts.
      i = nextComma(field, i);
      continue;
    }
    let j = close + 1;
    while (j < n && isOws(field.charCodeAt(j))) j++;
    if (j < n && field.charCodeAt(j) !== 0x2c) {
      i = nextComma(field, i);
      continue;
    }
    // The member must end here (slice + === beats startsWith-with-position on V8 by a wide margin).
    if (!(strong && weak) && close + 1 - start === length && field.slice(start, close + 1) === opaque) return true;
    // A comma inside the quotes ends the member there, unless every character up to the quote is etagc.
    const comma = field.indexOf(",", start + 1);
    i = comma === -1 || comma > close || isValidTagText(field.slice(start + 1, close)) ? j : comma;
  }
  return false;
}

const OPAQUE_TAG = /^"[\x21\x23-\x7e\x80-\xff]*"$/;
// A one-entry memo: a server compares against the same current tag over and over.
let lastValidOpaque = '""';

/** Whether `opaque` is a complete opaque-tag: DQUOTE *etagc DQUOTE. */
function isOpaqueTag(opaque: string): boolean {
  if (opaque === lastValidOpaque) return true;
  if (!OPAQUE_TAG.test(opaque)) return false;
  lastValidOpaque = opaque;
  return true;
}

/**
 * Whether an If-Match / If-None-Match field lists the current tag `etag` (a field value), by strong or
 * weak comparison. An invalid current tag is no validator and matches nothing; it is validated only
 * when it would otherwise match, which keeps the common miss path free of a character scan.
 */
export function fieldListsTag(field: string, etag: string, strong: boolean): boolean {
  const last = etag.length - 1;
  const c0 = etag.charCodeAt(0);
  const weak = c0 === 0x57 && etag.charCodeAt(1) === 0x2f;
  if ((c0 !== 0x22 && !weak) || etag.charCodeAt(last) !== 0x22) {
    // Surrounding whitespace or garbage: the slow path trims and validates first.
    const normalized = normalizeTag(etag);
    return normalized !== undefined && normalized !== etag && fieldListsTag(field, normalized, strong);
  }
  if (strong && weak) return false;
  const opaque = weak ? etag.slice(2) : etag;
  // The common request names exactly the tag the server sent.
  if (field === etag) return isOpaqueTag(opaque);
  return listMatches(field, opaque, weak, strong) && isOpaqueTag(opaque);
}

/**
 * A current ETag value trimmed of surrounding whitespace (the value itself when there is none), or
 * `undefined` when it is not a valid entity-tag and so is no validator at all.
 */
export function normalizeTag(etag: string): string | undefined {
  const [start, end] = trimmedBounds(etag);
  if (scanEntityTag(etag, start) !== end) return undefined;
  return start === 0 && end === etag.length ? etag : etag.slice(start, end);
}

/**
 * Refuses a current `etag` a caller gives that is neither a string nor a parsed `{ weak, tag }`: read as a tag, 42 would
 * become `"undefined"`. A string or tag that is no valid entity-tag stays "no validator", which fails closed.
 * @throws {CachingError} `invalid_entity_tag` naming `owner` and the value.
 */
export function validatorTag(owner: string, etag: unknown): void {
  if (etag === undefined || typeof etag === "string") return;
  if (typeof etag === "object" && etag !== null) {
    const { weak, tag } = etag as Partial<Record<keyof EntityTag, unknown>>;
    if (typeof weak === "boolean" && typeof tag === "string") return;
  }
  throw new CachingError(
    "invalid_entity_tag",
    `${owner}: etag must be an entity-tag field value such as '"v1"' or a parsed { weak, tag }, got ${describeOption(etag)}.`,
  );
}
