/**
 * Evaluation of conditional requests, RFC 9110 §13.2.2, for any method.
 */
import type { RequestHeaders, ResponseHeaders } from "../http/message";
import { isCacheable, isSafe } from "../http/methods";
import { finiteNumber } from "../options/number-option";
import { refuseOption } from "../options/refuse-option";
import {
  type EntityTag,
  fieldListsTag,
  isValidTagText,
  normalizeTag,
  parseEntityTagList,
  validatorTag,
} from "./entity-tag";
import { parseDateField, toSeconds, tryFormatHttpDate } from "./http-date";
import { validatorTime } from "./last-modified";
import { notModifiedHeaders } from "./not-modified";
import { readHeader } from "./response-headers";
import { isOws } from "./syntax";

/** The current validators of the target resource (RFC 9110 §8.8). */
export interface Validators {
  /**
   * The current ETag: a field value such as `'"a1"'` / `'W/"3"'`, or a parsed tag. A string or tag that is not a valid
   * entity-tag is no validator; a value of another type (a number, `null`) throws a `CachingError` (`invalid_entity_tag`).
   */
  etag?: string | EntityTag | undefined;
  /**
   * The last modification time: a Date, epoch milliseconds or an HTTP-date, compared at one-second resolution. A value
   * that is no time (an invalid Date, NaN, an ISO 8601 text) throws a `CachingError` (`invalid_date`).
   */
  lastModified?: Date | number | string | undefined;
}

/** The parts of a request that precondition evaluation reads. */
export interface ConditionalRequest {
  readonly method: string;
  readonly headers: RequestHeaders;
}

/** Which precondition evaluated to false. */
export type FailedPrecondition = "if-match" | "if-unmodified-since" | "if-none-match";

/** The outcome of {@link evaluatePreconditions}. */
export type PreconditionResult =
  /** Perform the method (§13.2.2 step 6; step 5, If-Range, is {@link evaluateIfRange}). */
  | { readonly kind: "proceed" }
  /** Answer 304 with these header fields and no content (GET/HEAD only). */
  | { readonly kind: "not-modified"; readonly headers: ResponseHeaders }
  /** Answer 412 and do not perform the method. */
  | { readonly kind: "precondition-failed"; readonly failed: FailedPrecondition }
  /** Answer 428 (RFC 6585 §3): the request had to be conditional and was not. */
  | { readonly kind: "precondition-required" }
  /**
   * Answer 400 and do not perform the method: an unsafe request carries an If-Match or If-None-Match that is not
   * `"*" / #entity-tag` (§13.1.1, §13.1.2), so which write it meant to guard is unknown.
   */
  | { readonly kind: "malformed-precondition"; readonly field: "if-match" | "if-none-match" };

/** Options for {@link evaluatePreconditions}. */
export interface EvaluateOptions {
  /**
   * Answer `precondition-required` when an unsafe method carries none of If-Match, If-None-Match and
   * If-Unmodified-Since (RFC 6585 §3), so clients cannot lose updates by forgetting to send one.
   * @default false
   */
  requirePrecondition?: boolean;
  /** The header fields the 200 response would carry; the 304 keeps those §15.4.5 asks for. */
  responseHeaders?: ResponseHeaders;
  /** The current time in epoch milliseconds, only for two-digit rfc850 years. @default Date.now() */
  now?: number;
}

const PROCEED = Object.freeze({ kind: "proceed" as const });
const REQUIRED = Object.freeze({ kind: "precondition-required" as const });
const FAILED = {
  "if-match": Object.freeze({ kind: "precondition-failed" as const, failed: "if-match" as const }),
  "if-unmodified-since": Object.freeze({
    kind: "precondition-failed" as const,
    failed: "if-unmodified-since" as const,
  }),
  "if-none-match": Object.freeze({ kind: "precondition-failed" as const, failed: "if-none-match" as const }),
};

const MALFORMED = {
  "if-match": Object.freeze({ kind: "malformed-precondition" as const, field: "if-match" as const }),
  "if-none-match": Object.freeze({ kind: "malformed-precondition" as const, field: "if-none-match" as const }),
};

// Outcome codes of the shared decision; results are only allocated for 304.
const GO = 0;
const NOT_MODIFIED = 1;
const FAIL_IF_MATCH = 2;
const FAIL_IF_UNMODIFIED_SINCE = 3;
const FAIL_IF_NONE_MATCH = 4;
type Outcome = 0 | 1 | 2 | 3 | 4;

// §13.2.1: "a server MUST ignore the conditional request header fields … when received with a request
// method that does not involve the selection or modification of a selected representation".
// The RFC names these methods rather than a property of the method table.
const NO_SELECTION = new Set(["CONNECT", "OPTIONS", "TRACE"]);

/**
 * Whether a false If-None-Match or If-Modified-Since answers `method` with 304 rather than 412: GET
 * and HEAD (RFC 9110 §13.1.2, §13.1.3, §15.4.5), the methods whose cached responses a client
 * revalidates, taken from the method table as its safe (§9.2.1) and cacheable (§9.2.3) methods.
 */
export function revalidates(method: string): boolean {
  return isSafe(method) && isCacheable(method);
}

/**
 * Refuses a `current` that is neither validators nor `undefined`, and an `etag` of the wrong type: both are the caller's
 * bug. `null` (a lookup's "no row") would otherwise pass for an existing resource, so `If-Match: *` would hold.
 */
export function checkCurrent(owner: string, current: Validators | undefined): void {
  if (current === undefined) return;
  if (typeof current !== "object" || current === null) {
    refuseOption(
      owner,
      "current",
      current,
      "the validators { etag?, lastModified? }, or undefined when it does not exist",
    );
  }
  validatorTag(owner, current.etag);
}

/**
 * The unsafe-method field that is not `"*" / #entity-tag` (§13.1.1, §13.1.2), or `undefined`. On a write the client
 * meant to guard a change: reading a malformed member as "matches nothing" would let an If-None-Match write through
 * and turn an If-Match into a 412 that blames the stored version for the client's syntax.
 */
function malformedField(headers: RequestHeaders): "if-match" | "if-none-match" | undefined {
  const ifMatch = headers["if-match"];
  if (ifMatch !== undefined && parseEntityTagList(ifMatch) === undefined) return "if-match";
  const ifNoneMatch = headers["if-none-match"];
  if (ifNoneMatch !== undefined && parseEntityTagList(ifNoneMatch) === undefined) return "if-none-match";
  return undefined;
}

/** The current tag normalised to a field value (`"x"` or `W/"x"`), or `undefined` when there is none. */
function currentTag(etag: string | EntityTag | undefined): string | undefined {
  if (etag === undefined) return undefined;
  if (typeof etag !== "string") {
    if (!isValidTagText(etag.tag)) return undefined;
    return etag.weak ? `W/"${etag.tag}"` : `"${etag.tag}"`;
  }
  return normalizeTag(etag);
}

/** §13.1.1 / §13.1.2: the field value is exactly `*` (OWS around it allowed). */
function isStarField(field: string): boolean {
  if (field === "*") return true;
  const star = field.indexOf("*");
  if (star === -1) return false;
  for (let i = 0; i < field.length; i++) if (i !== star && !isOws(field.charCodeAt(i))) return false;
  return true;
}

/** A field value for the current tag, validated later and only if it matters (see `fieldListsTag`). */
function rawTag(etag: string | EntityTag | undefined): string | undefined {
  if (etag === undefined || typeof etag === "string") return etag;
  return etag.weak ? `W/"${etag.tag}"` : `"${etag.tag}"`;
}

/** §13.1.1: true for `*` when a representation exists, else when a listed tag matches by strong comparison. */
function ifMatchHolds(field: string, exists: boolean, etag: string | EntityTag | undefined): boolean {
  if (isStarField(field)) return exists;
  const tag = exists ? rawTag(etag) : undefined;
  return tag !== undefined && fieldListsTag(field, tag, true);
}

/** §13.1.2: false for `*` when a representation exists, else when a listed tag matches by weak comparison. */
function ifNoneMatchHolds(field: string, exists: boolean, etag: string | EntityTag | undefined): boolean {
  if (isStarField(field)) return !exists;
  const tag = exists ? rawTag(etag) : undefined;
  return tag === undefined || !fieldListsTag(field, tag, false);
}

/** The §13.2.2 decision, steps 1-4, on plain values. */
function decide(
  getOrHead: boolean,
  headers: RequestHeaders,
  exists: boolean,
  etag: string | EntityTag | undefined,
  lastModified: Date | number | string | undefined,
  now: number | undefined,
): Outcome {
  const ifMatch = headers["if-match"];
  if (ifMatch !== undefined) {
    // Step 1: If-Match (§13.1.1). Its presence also makes If-Unmodified-Since ignored (§13.1.4).
    if (!ifMatchHolds(ifMatch, exists, etag)) return FAIL_IF_MATCH;
  } else {
    const ifUnmodifiedSince = headers["if-unmodified-since"];
    // Step 2: If-Unmodified-Since (§13.1.4), ignored without a valid HTTP-date or a modification date.
    if (ifUnmodifiedSince !== undefined && exists && lastModified !== undefined) {
      const date = parseDateField(ifUnmodifiedSince, now);
      const modified = date === undefined ? undefined : toSeconds(lastModified, now);
      if (date !== undefined && modified !== undefined && modified > date) return FAIL_IF_UNMODIFIED_SINCE;
    }
  }
  const ifNoneMatch = headers["if-none-match"];
  if (ifNoneMatch !== undefined) {
    // Step 3: If-None-Match (§13.1.2): 304 for GET/HEAD, 412 for every other method.
    if (!ifNoneMatchHolds(ifNoneMatch, exists, etag)) return getOrHead ? NOT_MODIFIED : FAIL_IF_NONE_MATCH;
  } else if (getOrHead) {
    const ifModifiedSince = headers["if-modified-since"];
    // Step 4: If-Modified-Since (§13.1.3), GET/HEAD only, ignored when If-None-Match is present, when the
    // value is not one valid HTTP-date (a list of dates is not), or without a modification date.
    if (ifModifiedSince !== undefined && exists && lastModified !== undefined) {
      const date = parseDateField(ifModifiedSince, now);
      const modified = date === undefined ? undefined : toSeconds(lastModified, now);
      if (date !== undefined && modified !== undefined && modified <= date) return NOT_MODIFIED;
    }
  }
  return GO;
}

function notModified(
  etag: Validators["etag"],
  lastModified: number | undefined,
  options: EvaluateOptions | undefined,
): PreconditionResult {
  const headers = options?.responseHeaders === undefined ? {} : notModifiedHeaders(options.responseHeaders);
  let hasEtag = readHeader(headers, "etag") !== undefined;
  if (!hasEtag) {
    const tag = currentTag(etag);
    if (tag !== undefined) {
      headers.etag = tag;
      hasEtag = true;
    }
  }
  if (!hasEtag && readHeader(headers, "last-modified") === undefined) {
    const modified = tryFormatHttpDate(toSeconds(lastModified));
    if (modified !== undefined) headers["last-modified"] = modified;
  }
  return { kind: "not-modified", headers };
}

/**
 * Evaluates the conditional header fields of a request against the target resource's current validators,
 * in the order of RFC 9110 §13.2.2 (If-Match, If-Unmodified-Since, If-None-Match, If-Modified-Since).
 * Never throws on header content. On GET and HEAD a malformed If-Match / If-None-Match member matches nothing and
 * invalid dates are ignored (§13.1); on an unsafe method a malformed If-Match / If-None-Match is
 * `malformed-precondition` (a 400), since the write it meant to guard cannot be evaluated.
 *
 * Call it once the request is otherwise known to succeed (§13.2.1: preconditions are ignored when the
 * unconditional response would not be 2xx or 412).
 *
 * @param current the resource's validators, or `undefined` when it has no current representation
 *   (`If-Match: *` then fails and `If-None-Match: *` holds).
 * @example
 * const result = evaluatePreconditions(request, { etag: '"v7"' });
 * if (result.kind !== "proceed") return preconditionResponse(result);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13.2.2
 */
export function evaluatePreconditions(
  request: ConditionalRequest,
  current: Validators | undefined,
  options?: EvaluateOptions,
): PreconditionResult {
  // Checked whatever the request carries: a bad clock is the caller's bug, not for a client's dates to reveal.
  if (options?.now !== undefined) finiteNumber("evaluatePreconditions", "now", options.now, "epoch milliseconds");
  const now = options?.now;
  // Checked whatever the request carries, as `now` is: validators of the wrong type are the caller's bug.
  checkCurrent("evaluatePreconditions", current);
  const lastModified = validatorTime("evaluatePreconditions", current?.lastModified, now);
  const { method, headers } = request;
  if (NO_SELECTION.has(method)) return PROCEED;
  const getOrHead = revalidates(method);
  if (
    options?.requirePrecondition === true &&
    // RFC 6585 §3: the lost-update problem concerns methods that change state (RFC 9110 §9.2.1).
    !isSafe(method) &&
    headers["if-match"] === undefined &&
    headers["if-none-match"] === undefined &&
    headers["if-unmodified-since"] === undefined
  ) {
    return REQUIRED;
  }
  if (!isSafe(method)) {
    const malformed = malformedField(headers);
    if (malformed !== undefined) return MALFORMED[malformed];
  }
  const outcome = decide(getOrHead, headers, current !== undefined, current?.etag, lastModified, now);
  switch (outcome) {
    case GO:
      return PROCEED;
    case NOT_MODIFIED:
      return notModified(current?.etag, lastModified, options);
    case FAIL_IF_MATCH:
      return FAILED["if-match"];
    case FAIL_IF_UNMODIFIED_SINCE:
      return FAILED["if-unmodified-since"];
    default:
      return FAILED["if-none-match"];
  }
}

/**
 * Whether a GET with these request headers is answered 304 given the headers of the 200 it would get:
 * the drop-in for the `fresh` package, following all of §13.2.2 (an If-Match that fails means 412, not 304).
 * @example isFresh({ "if-none-match": '"a"' }, { etag: '"a"' }) // true
 */
export function isFresh(
  requestHeaders: RequestHeaders,
  responseHeaders: ResponseHeaders | Readonly<Record<string, unknown>>,
): boolean {
  const ifNoneMatch = requestHeaders["if-none-match"];
  if (ifNoneMatch === undefined && requestHeaders["if-modified-since"] === undefined) return false;
  const etag = readHeader(responseHeaders, "etag");
  // Last-Modified only matters to the date preconditions: skip reading it for the common tag-only request.
  const needsDate =
    requestHeaders["if-unmodified-since"] !== undefined ||
    (ifNoneMatch === undefined && requestHeaders["if-modified-since"] !== undefined);
  const lastModified = needsDate ? readHeader(responseHeaders, "last-modified") : undefined;
  return decide(true, requestHeaders, true, etag, lastModified, undefined) === NOT_MODIFIED;
}
