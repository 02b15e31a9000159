/**
 * The case matrix of RFC 9110 §13.2.2: every step alone, and the combinations where precedence matters.
 * Shared by the example tests and the reference-model property.
 */

import type { PreconditionResult, Validators } from "../../src/caching/index";
import type { RequestHeaders } from "../../src/http/message";

export const ETAG = '"v2"';
export const LAST_MODIFIED = "Wed, 01 May 2024 12:00:00 GMT";
export const BEFORE = "Tue, 30 Apr 2024 12:00:00 GMT";
export const AFTER = "Thu, 02 May 2024 12:00:00 GMT";
export const BEFORE_RFC850 = "Tuesday, 30-Apr-24 12:00:00 GMT";
export const AFTER_ASCTIME = "Thu May  2 12:00:00 2024";
export const NOW = Date.parse("2024-06-01T00:00:00Z");

export const CURRENT: Validators = { etag: ETAG, lastModified: LAST_MODIFIED };

type Expected =
  | PreconditionResult["kind"]
  | "failed:if-match"
  | "failed:if-unmodified-since"
  | "failed:if-none-match"
  | "malformed:if-match"
  | "malformed:if-none-match";

export interface PreconditionCase {
  name: string;
  method: string;
  headers: RequestHeaders;
  /** `null`: the resource has no current representation. */
  current?: Validators | null;
  requirePrecondition?: boolean;
  expected: Expected;
}

const EXISTING_WITHOUT_TAG: Validators = { lastModified: LAST_MODIFIED };
const WEAK_CURRENT: Validators = { etag: 'W/"v2"', lastModified: LAST_MODIFIED };
const NO_DATE: Validators = { etag: ETAG };

export const CASES: Record<string, PreconditionCase[]> = {
  "no preconditions": [
    { name: "GET without conditional fields proceeds", method: "GET", headers: {}, expected: "proceed" },
    { name: "PUT without conditional fields proceeds", method: "PUT", headers: {}, expected: "proceed" },
  ],
  "step 1: If-Match (§13.1.1)": [
    { name: "matching tag", method: "PUT", headers: { "if-match": ETAG }, expected: "proceed" },
    { name: "stale tag", method: "PUT", headers: { "if-match": '"v1"' }, expected: "failed:if-match" },
    { name: "list containing the tag", method: "PUT", headers: { "if-match": '"v1", "v2"' }, expected: "proceed" },
    {
      name: "weak tag never matches (strong comparison)",
      method: "PUT",
      headers: { "if-match": 'W/"v2"' },
      expected: "failed:if-match",
    },
    {
      name: "weak current tag never matches",
      method: "PUT",
      headers: { "if-match": ETAG },
      current: WEAK_CURRENT,
      expected: "failed:if-match",
    },
    { name: "* with a current representation", method: "PUT", headers: { "if-match": "*" }, expected: "proceed" },
    {
      name: "* without a current representation",
      method: "PUT",
      headers: { "if-match": "*" },
      current: null,
      expected: "failed:if-match",
    },
    {
      name: "tag without a current representation",
      method: "PUT",
      headers: { "if-match": ETAG },
      current: null,
      expected: "failed:if-match",
    },
    {
      name: "tag when the resource has no ETag",
      method: "PUT",
      headers: { "if-match": ETAG },
      current: EXISTING_WITHOUT_TAG,
      expected: "failed:if-match",
    },
    {
      name: "GET with a stale tag is 412 too",
      method: "GET",
      headers: { "if-match": '"v1"' },
      expected: "failed:if-match",
    },
    { name: "DELETE with a stale tag", method: "DELETE", headers: { "if-match": '"v1"' }, expected: "failed:if-match" },
    {
      name: "malformed field matches nothing (GET; a write answers 400)",
      method: "GET",
      headers: { "if-match": "v2" },
      expected: "failed:if-match",
    },
    {
      name: "a malformed member does not void the rest (GET)",
      method: "GET",
      headers: { "if-match": '"v1", junk, "v2"' },
      expected: "proceed",
    },
    {
      name: "an unclosed member ends at its comma, not the next tag's quote (GET)",
      method: "GET",
      headers: { "if-match": '"x, "v2"' },
      expected: "proceed",
    },
    {
      name: "an unclosed weak member ends at its comma (GET)",
      method: "GET",
      headers: { "if-match": 'W/"x, "v2"' },
      expected: "proceed",
    },
    {
      name: "* with OWS around it",
      method: "PUT",
      headers: { "if-match": "\t* " },
      expected: "proceed",
    },
    {
      name: "* with a line break around it is no wildcard (GET)",
      method: "GET",
      headers: { "if-match": "*\n" },
      expected: "failed:if-match",
    },
    {
      name: "* inside a list is no wildcard (GET)",
      method: "GET",
      headers: { "if-match": '"v1", *' },
      expected: "failed:if-match",
    },
    {
      name: "OWS with tabs around members",
      method: "PUT",
      headers: { "if-match": '\t"v1" ,\t"v2"\t' },
      expected: "proceed",
    },
    { name: "empty field is an empty list", method: "PUT", headers: { "if-match": "" }, expected: "failed:if-match" },
  ],
  "step 2: If-Unmodified-Since (§13.1.4)": [
    { name: "date after Last-Modified", method: "PUT", headers: { "if-unmodified-since": AFTER }, expected: "proceed" },
    {
      name: "date equal to Last-Modified",
      method: "PUT",
      headers: { "if-unmodified-since": LAST_MODIFIED },
      expected: "proceed",
    },
    {
      name: "date before Last-Modified",
      method: "PUT",
      headers: { "if-unmodified-since": BEFORE },
      expected: "failed:if-unmodified-since",
    },
    {
      name: "rfc850 date before Last-Modified",
      method: "PUT",
      headers: { "if-unmodified-since": BEFORE_RFC850 },
      expected: "failed:if-unmodified-since",
    },
    {
      name: "asctime date after Last-Modified",
      method: "PUT",
      headers: { "if-unmodified-since": AFTER_ASCTIME },
      expected: "proceed",
    },
    {
      name: "ignored when If-Match is present (and holds)",
      method: "PUT",
      headers: { "if-match": ETAG, "if-unmodified-since": BEFORE },
      expected: "proceed",
    },
    {
      name: "If-Match decides first when both fail",
      method: "PUT",
      headers: { "if-match": '"v1"', "if-unmodified-since": BEFORE },
      expected: "failed:if-match",
    },
    {
      name: "ignored without a modification date",
      method: "PUT",
      headers: { "if-unmodified-since": BEFORE },
      current: NO_DATE,
      expected: "proceed",
    },
    {
      name: "ignored without a current representation",
      method: "PUT",
      headers: { "if-unmodified-since": BEFORE },
      current: null,
      expected: "proceed",
    },
    {
      name: "invalid date is ignored",
      method: "PUT",
      headers: { "if-unmodified-since": "2024-04-30" },
      expected: "proceed",
    },
    {
      name: "a date with a letter in the year is ignored (was read as year 1020)",
      method: "GET",
      headers: { "if-unmodified-since": "Sun, 06 Nov 202x 08:49:37 GMT" },
      expected: "proceed",
    },
    {
      name: "a list of dates is ignored",
      method: "PUT",
      headers: { "if-unmodified-since": `${BEFORE}, ${BEFORE}` },
      expected: "proceed",
    },
    {
      name: "applies to GET too",
      method: "GET",
      headers: { "if-unmodified-since": BEFORE },
      expected: "failed:if-unmodified-since",
    },
    // Regression: OWS around the field value made the date invalid, so the write went ahead.
    {
      name: "a date with OWS around it still counts (§5.5)",
      method: "PUT",
      headers: { "if-unmodified-since": ` ${BEFORE}\t` },
      expected: "failed:if-unmodified-since",
    },
    {
      name: "a date followed by NBSP is no date (only SP and HTAB are OWS)",
      method: "PUT",
      headers: { "if-unmodified-since": `${BEFORE}\u00a0` },
      expected: "proceed",
    },
  ],
  "step 3: If-None-Match (§13.1.2)": [
    { name: "GET with the current tag", method: "GET", headers: { "if-none-match": ETAG }, expected: "not-modified" },
    { name: "HEAD with the current tag", method: "HEAD", headers: { "if-none-match": ETAG }, expected: "not-modified" },
    {
      name: "GET with the tag marked weak (weak comparison)",
      method: "GET",
      headers: { "if-none-match": 'W/"v2"' },
      expected: "not-modified",
    },
    {
      name: "GET against a weak current tag",
      method: "GET",
      headers: { "if-none-match": ETAG },
      current: WEAK_CURRENT,
      expected: "not-modified",
    },
    { name: "GET with a stale tag", method: "GET", headers: { "if-none-match": '"v1"' }, expected: "proceed" },
    {
      name: "GET with a list containing the tag",
      method: "GET",
      headers: { "if-none-match": '"v1", W/"v2"' },
      expected: "not-modified",
    },
    {
      name: "GET with an unclosed member before the tag",
      method: "GET",
      headers: { "if-none-match": '"x, "v2"' },
      expected: "not-modified",
    },
    {
      name: "GET with an unclosed weak member before the tag (once answered unlike If-Match)",
      method: "GET",
      headers: { "if-none-match": 'W/"x, "v2"' },
      expected: "not-modified",
    },
    {
      name: "GET with * and a representation",
      method: "GET",
      headers: { "if-none-match": "*" },
      expected: "not-modified",
    },
    {
      name: "GET with * and no representation",
      method: "GET",
      headers: { "if-none-match": "*" },
      current: null,
      expected: "proceed",
    },
    {
      name: "PUT with * on an existing resource",
      method: "PUT",
      headers: { "if-none-match": "*" },
      expected: "failed:if-none-match",
    },
    {
      name: "PUT with * creates when absent",
      method: "PUT",
      headers: { "if-none-match": "*" },
      current: null,
      expected: "proceed",
    },
    {
      name: "PUT with the current tag",
      method: "PUT",
      headers: { "if-none-match": ETAG },
      expected: "failed:if-none-match",
    },
    {
      name: "POST with the current tag",
      method: "POST",
      headers: { "if-none-match": ETAG },
      expected: "failed:if-none-match",
    },
    {
      name: "DELETE with the current tag",
      method: "DELETE",
      headers: { "if-none-match": ETAG },
      expected: "failed:if-none-match",
    },
    { name: "PATCH with a stale tag", method: "PATCH", headers: { "if-none-match": '"v1"' }, expected: "proceed" },
    {
      name: "GET when the resource has no ETag",
      method: "GET",
      headers: { "if-none-match": ETAG },
      current: EXISTING_WITHOUT_TAG,
      expected: "proceed",
    },
    {
      name: "an invalid current tag is no validator",
      method: "GET",
      headers: { "if-none-match": '"a b"' },
      current: { etag: '"a b"' },
      expected: "proceed",
    },
    {
      name: "an unquoted current tag is no validator",
      method: "GET",
      headers: { "if-none-match": "v2" },
      current: { etag: "v2" },
      expected: "proceed",
    },
    {
      name: "the empty opaque-tag is a tag",
      method: "GET",
      headers: { "if-none-match": '""' },
      current: { etag: '""' },
      expected: "not-modified",
    },
    {
      name: "a current tag with surrounding whitespace",
      method: "GET",
      headers: { "if-none-match": ETAG },
      current: { etag: ' "v2"\t' },
      expected: "not-modified",
    },
    {
      name: "a quoted comma is part of the tag",
      method: "GET",
      headers: { "if-none-match": '"a,b"' },
      current: { etag: '"a,b"' },
      expected: "not-modified",
    },
    {
      name: "after If-Match holds",
      method: "GET",
      headers: { "if-match": ETAG, "if-none-match": ETAG },
      expected: "not-modified",
    },
    {
      name: "after If-Match fails: 412 wins",
      method: "GET",
      headers: { "if-match": '"v1"', "if-none-match": ETAG },
      expected: "failed:if-match",
    },
    {
      name: "after If-Unmodified-Since fails: 412 wins",
      method: "PUT",
      headers: { "if-unmodified-since": BEFORE, "if-none-match": '"v1"' },
      expected: "failed:if-unmodified-since",
    },
  ],
  "step 4: If-Modified-Since (§13.1.3)": [
    {
      name: "date equal to Last-Modified",
      method: "GET",
      headers: { "if-modified-since": LAST_MODIFIED },
      expected: "not-modified",
    },
    {
      name: "date after Last-Modified",
      method: "GET",
      headers: { "if-modified-since": AFTER },
      expected: "not-modified",
    },
    { name: "date before Last-Modified", method: "GET", headers: { "if-modified-since": BEFORE }, expected: "proceed" },
    {
      name: "HEAD with an equal date",
      method: "HEAD",
      headers: { "if-modified-since": LAST_MODIFIED },
      expected: "not-modified",
    },
    { name: "rfc850 date before", method: "GET", headers: { "if-modified-since": BEFORE_RFC850 }, expected: "proceed" },
    {
      name: "asctime date after",
      method: "GET",
      headers: { "if-modified-since": AFTER_ASCTIME },
      expected: "not-modified",
    },
    {
      name: "compared at one-second resolution",
      method: "GET",
      headers: { "if-modified-since": LAST_MODIFIED },
      current: { lastModified: Date.parse(LAST_MODIFIED) + 999 },
      expected: "not-modified",
    },
    { name: "ignored for PUT", method: "PUT", headers: { "if-modified-since": AFTER }, expected: "proceed" },
    { name: "ignored for POST", method: "POST", headers: { "if-modified-since": AFTER }, expected: "proceed" },
    {
      name: "ignored when If-None-Match is present",
      method: "GET",
      headers: { "if-none-match": '"v1"', "if-modified-since": AFTER },
      expected: "proceed",
    },
    {
      name: "ignored when If-None-Match is present but empty",
      method: "GET",
      headers: { "if-none-match": "", "if-modified-since": AFTER },
      expected: "proceed",
    },
    {
      name: "If-None-Match decides: match despite an old date",
      method: "GET",
      headers: { "if-none-match": ETAG, "if-modified-since": BEFORE },
      expected: "not-modified",
    },
    {
      name: "invalid date is ignored",
      method: "GET",
      headers: { "if-modified-since": "yesterday" },
      expected: "proceed",
    },
    {
      name: "lower-case names are not an HTTP-date",
      method: "GET",
      headers: { "if-modified-since": LAST_MODIFIED.toLowerCase() },
      expected: "proceed",
    },
    {
      name: "a date with OWS around it still counts (§5.5)",
      method: "GET",
      headers: { "if-modified-since": `\t${LAST_MODIFIED} ` },
      expected: "not-modified",
    },
    {
      name: "a Last-Modified with OWS around it still counts (§5.5)",
      method: "GET",
      headers: { "if-modified-since": LAST_MODIFIED },
      current: { etag: ETAG, lastModified: ` ${LAST_MODIFIED}\t` },
      expected: "not-modified",
    },
    {
      name: "a list of dates is ignored",
      method: "GET",
      headers: { "if-modified-since": `${AFTER}, ${AFTER}` },
      expected: "proceed",
    },
    {
      name: "ignored without a modification date",
      method: "GET",
      headers: { "if-modified-since": AFTER },
      current: NO_DATE,
      expected: "proceed",
    },
    {
      name: "after If-Unmodified-Since holds",
      method: "GET",
      headers: { "if-unmodified-since": AFTER, "if-modified-since": LAST_MODIFIED },
      expected: "not-modified",
    },
    {
      name: "after If-Match holds",
      method: "GET",
      headers: { "if-match": ETAG, "if-modified-since": LAST_MODIFIED },
      expected: "not-modified",
    },
    {
      name: "after If-Unmodified-Since fails: 412 wins",
      method: "GET",
      headers: { "if-unmodified-since": BEFORE, "if-modified-since": AFTER },
      expected: "failed:if-unmodified-since",
    },
  ],
  "§13.2.1: methods that select no representation": [
    {
      name: "OPTIONS ignores a failing If-Match",
      method: "OPTIONS",
      headers: { "if-match": '"v1"' },
      expected: "proceed",
    },
    {
      name: "TRACE ignores a matching If-None-Match",
      method: "TRACE",
      headers: { "if-none-match": ETAG },
      expected: "proceed",
    },
    {
      name: "CONNECT ignores If-Unmodified-Since",
      method: "CONNECT",
      headers: { "if-unmodified-since": BEFORE },
      expected: "proceed",
    },
  ],
  "RFC 6585 §3: require a precondition": [
    {
      name: "PUT without any",
      method: "PUT",
      headers: {},
      requirePrecondition: true,
      expected: "precondition-required",
    },
    {
      name: "DELETE with only If-Modified-Since (not one for DELETE)",
      method: "DELETE",
      headers: { "if-modified-since": AFTER },
      requirePrecondition: true,
      expected: "precondition-required",
    },
    {
      name: "PUT with If-Match is evaluated",
      method: "PUT",
      headers: { "if-match": '"v1"' },
      requirePrecondition: true,
      expected: "failed:if-match",
    },
    {
      name: "PUT with If-None-Match: * creates",
      method: "PUT",
      headers: { "if-none-match": "*" },
      current: null,
      requirePrecondition: true,
      expected: "proceed",
    },
    {
      name: "PATCH with If-Unmodified-Since",
      method: "PATCH",
      headers: { "if-unmodified-since": AFTER },
      requirePrecondition: true,
      expected: "proceed",
    },
    {
      name: "GET is never required to be conditional",
      method: "GET",
      headers: {},
      requirePrecondition: true,
      expected: "proceed",
    },
    {
      name: "HEAD is safe: never required either",
      method: "HEAD",
      headers: {},
      requirePrecondition: true,
      expected: "proceed",
    },
    {
      name: "an extension method is unsafe (RFC 9110 §9.2.1): required",
      method: "PURGE",
      headers: {},
      requirePrecondition: true,
      expected: "precondition-required",
    },
  ],
  // Regression: a malformed If-None-Match on a write matched nothing, so the write the client meant to guard went
  // through; a malformed If-Match was a 412 that told the client its copy was stale when its field was the fault.
  "malformed If-Match / If-None-Match on a write (§13.1.1, §13.1.2: 400)": [
    ...(["PUT", "PATCH", "DELETE", "POST", "PURGE"] as const).flatMap((method) => [
      {
        name: `${method} with an unquoted If-None-Match`,
        method,
        headers: { "if-none-match": "abc" },
        expected: "malformed:if-none-match" as const,
      },
      {
        name: `${method} with an unquoted If-Match`,
        method,
        headers: { "if-match": "abc" },
        expected: "malformed:if-match" as const,
      },
    ]),
    {
      name: "a malformed member beside the current tag",
      method: "PUT",
      headers: { "if-match": '"v1", junk, "v2"' },
      expected: "malformed:if-match",
    },
    {
      name: "an unclosed member",
      method: "PUT",
      headers: { "if-none-match": '"x, "v1"' },
      expected: "malformed:if-none-match",
    },
    {
      name: "* inside a list",
      method: "PUT",
      headers: { "if-none-match": '"v1", *' },
      expected: "malformed:if-none-match",
    },
    { name: "a line break after *", method: "PUT", headers: { "if-match": "*\n" }, expected: "malformed:if-match" },
    {
      name: "a missing resource does not hide it",
      method: "PUT",
      headers: { "if-none-match": "abc" },
      current: null,
      expected: "malformed:if-none-match",
    },
    {
      name: "If-Match is checked first",
      method: "PUT",
      headers: { "if-match": "abc", "if-none-match": "def" },
      expected: "malformed:if-match",
    },
    {
      name: "a valid If-Match does not excuse a malformed If-None-Match",
      method: "PUT",
      headers: { "if-match": ETAG, "if-none-match": "abc" },
      expected: "malformed:if-none-match",
    },
    {
      name: "empty list elements are allowed (§5.6.1)",
      method: "PUT",
      headers: { "if-match": ' , "v1" ,, "v2" ,' },
      expected: "proceed",
    },
    {
      name: "an empty If-None-Match is an empty list",
      method: "PUT",
      headers: { "if-none-match": "" },
      expected: "proceed",
    },
    {
      name: "GET: a malformed If-None-Match matches nothing (the 200 is sent)",
      method: "GET",
      headers: { "if-none-match": "abc" },
      current: { etag: "abc" },
      expected: "proceed",
    },
    {
      name: "HEAD: a malformed member does not void the rest",
      method: "HEAD",
      headers: { "if-none-match": `abc, ${ETAG}` },
      expected: "not-modified",
    },
    {
      name: "OPTIONS ignores the fields (§13.2.1)",
      method: "OPTIONS",
      headers: { "if-match": "abc", "if-none-match": "abc" },
      expected: "proceed",
    },
  ],
  "the method table decides 304 vs 412 (safe and cacheable: GET, HEAD)": [
    { name: "HEAD gets 304", method: "HEAD", headers: { "if-none-match": ETAG }, expected: "not-modified" },
    {
      name: "POST (cacheable, unsafe) gets 412",
      method: "POST",
      headers: { "if-none-match": ETAG },
      expected: "failed:if-none-match",
    },
    {
      name: "an extension method gets 412",
      method: "PURGE",
      headers: { "if-none-match": "*" },
      expected: "failed:if-none-match",
    },
    {
      name: "If-Modified-Since is ignored for an extension method",
      method: "PURGE",
      headers: { "if-modified-since": AFTER },
      expected: "proceed",
    },
    {
      name: "methods are case-sensitive (§9.1): lower-case get is an extension method",
      method: "get",
      headers: { "if-none-match": ETAG },
      expected: "failed:if-none-match",
    },
  ],
};

/** The expected kind as the result carries it. */
export function describeResult(result: PreconditionResult): Expected {
  if (result.kind === "precondition-failed") return `failed:${result.failed}`;
  return result.kind === "malformed-precondition" ? `malformed:${result.field}` : result.kind;
}
