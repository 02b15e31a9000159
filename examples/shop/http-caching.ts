import {
  etagFromBody,
  etagFromVersion,
  evaluatePreconditions,
  formatCacheControl,
  preconditionProblem,
  preconditionResponse,
  settledLastModified,
  type Validators,
} from "rest-webhooks/caching";
import {
  type DescribedHeader,
  describeMiddleware,
  type Handler,
  type HttpRequest,
  type HttpResponse,
  json,
  type ResponseHeaders,
} from "rest-webhooks/http";
import type { Middleware } from "rest-webhooks/routing";

/** What the caching headers are computed from: a stored record's version and modification time. */
export interface Versioned {
  readonly version: number;
  /** Epoch ms. */
  readonly updatedAt: number;
}

// Per-user data behind a token: only the client may store it, and it must revalidate (cheap, thanks to 304).
const CACHE_CONTROL = formatCacheControl({ private: true, noCache: true });

/**
 * The validators of a record: a strong ETag from its version (every change bumps it, and the representation
 * is a function of the record, so equal tags mean equal bytes: RFC 9110 §8.8.3) and its modification time,
 * never after now (RFC 9110 §8.8.2.1), as the Last-Modified header sends it.
 */
export function validatorsOf(record: Versioned, now: number): Validators {
  return { etag: etagFromVersion(record.version, { weak: false }), lastModified: Math.min(record.updatedAt, now) };
}

/**
 * ETag, Last-Modified and Cache-Control for a record's representation. Last-Modified goes out once the second of the
 * change is over (`settledLastModified`): a date sent within that second would hide a second change made in it.
 */
export function cachingHeaders(record: Versioned, now: number): ResponseHeaders {
  const headers: ResponseHeaders = { etag: etagFromVersion(record.version, { weak: false }) };
  const lastModified = settledLastModified(record.updatedAt, now);
  if (lastModified !== undefined) headers["last-modified"] = lastModified;
  headers["cache-control"] = CACHE_CONTROL;
  return headers;
}

/** Cache-Control for representations whose validators are computed from the body (lists). */
export const LIST_CACHE_CONTROL = CACHE_CONTROL;

/**
 * The strong ETag of a list page: the SHA-1 of its body and of its `Link` field together. A 304 refreshes the
 * stored header fields it carries and cannot remove one (RFC 9111 §4.3.4), so a tag of the body alone would keep
 * a cached `rel="next"` to a page that is gone, once the page's items stay and the later ones go. A strong
 * validator may change with metadata as well as with the content (RFC 9110 §8.8.1); equal tags still mean equal
 * bytes (§8.8.3).
 * @param link the page's `Link` field value, or `undefined` when it sends none.
 * @example pageEtag('[{"id":"ord_1"}]', '</orders?limit=1&cursor=bzE>; rel="next"') // '"…27 characters…"'
 */
export function pageEtag(body: string, link: string | undefined): string {
  // A field value holds no line break (RFC 9110 §5.5), and the body starts with "[": the two cannot run together.
  return etagFromBody(link === undefined ? body : `${link}\n${body}`);
}

/**
 * Answers a GET (or HEAD) of a record: evaluates its preconditions first (RFC 9110 §13.2.2), so a 304 or 412
 * costs no rendering, else the 200 with the JSON `render` builds and the caching headers.
 */
export function conditionalRead(
  request: HttpRequest,
  record: Versioned,
  now: number,
  render: () => unknown,
): HttpResponse {
  const headers = cachingHeaders(record, now);
  // The validators are the ones these headers send: the tag as is, the time before formatting.
  const current = { etag: headers.etag as string, lastModified: Math.min(record.updatedAt, now) };
  const result = evaluatePreconditions(request, current, { responseHeaders: headers, now });
  return preconditionResponse(result) ?? json(200, render(), headers);
}

/**
 * Evaluates If-Match / If-Unmodified-Since of an unsafe request against the record it would change, inside the
 * transaction that changes it, so the check and the write are atomic: throws the 412 problem when stale
 * (RFC 9110 §13.1.1: the client's copy is stale; it must GET the resource again).
 */
export function assertPreconditions(request: HttpRequest, record: Versioned, now: number): void {
  const problem = preconditionProblem(evaluatePreconditions(request, validatorsOf(record, now)));
  if (problem !== undefined) throw problem;
}

/** Whether `request` carries a precondition an unsafe method evaluates (RFC 9110 §13.1.1, §13.1.2, §13.1.4). */
export function hasPreconditions(request: HttpRequest): boolean {
  const { headers } = request;
  return (
    headers["if-match"] !== undefined ||
    headers["if-none-match"] !== undefined ||
    headers["if-unmodified-since"] !== undefined
  );
}

/**
 * Evaluates the preconditions of a POST against the collection it adds to (RFC 9110 §13.1.1: the target resource's
 * current representation), throwing the 412 problem when one is false. `current` is the validators its GET answers,
 * or `undefined` for a collection with no representation (`If-Match: *` fails, `If-None-Match: *` holds).
 */
export function assertCollectionPreconditions(request: HttpRequest, current: Validators | undefined): void {
  const problem = preconditionProblem(evaluatePreconditions(request, current));
  if (problem !== undefined) throw problem;
}

const READS = ["GET", "HEAD"];

const ETAG: DescribedHeader = { description: "The record's version, as a strong entity tag (RFC 9110 §8.8.3)." };
const CACHE_CONTROL_HEADER: DescribedHeader = {
  description: "`private, no-cache`: only the client stores it, and revalidates it.",
};

/** {@link LIST_CACHE_CONTROL} as an OpenAPI response header. */
export const LIST_CACHE_CONTROL_HEADER: DescribedHeader = CACHE_CONTROL_HEADER;

/**
 * The headers {@link cachingHeaders} sends, as OpenAPI response headers: for the `responses` of an operation that
 * answers with them (a create's 201, a replace's 200).
 */
export const CACHING_HEADERS: Readonly<Record<string, DescribedHeader>> = {
  ETag: ETAG,
  "Last-Modified": {
    description:
      "When the record last changed, never after now (RFC 9110 §8.8.2); sent once that second is over, so that no " +
      "two versions carry one date.",
  },
  "Cache-Control": CACHE_CONTROL_HEADER,
};

/**
 * What {@link conditionalRead} reads and answers, riding on a middleware that changes nothing: an operation that
 * answers with `conditionalRead` mounts it (`use: [conditionalReadDescribed]`), and `/openapi.json` lists the
 * precondition headers it evaluates (RFC 9110 §13.1), its validators on the 200, and its 304 (§15.4.5: the ETag and
 * Cache-Control the 200 would carry) and 412.
 */
export const conditionalReadDescribed: Middleware = describeMiddleware((next: Handler) => next, {
  requestHeaders: {
    "If-None-Match": { description: "Answer 304 when one of these ETags is current.", methods: READS },
    "If-Modified-Since": {
      description: "Answer 304 when not modified since (ignored with If-None-Match).",
      methods: READS,
    },
    "If-Match": { description: "Answer only when one of these ETags is current (else 412).", methods: READS },
    "If-Unmodified-Since": { description: "Answer only when not modified since (else 412).", methods: READS },
  },
  successHeaders: CACHING_HEADERS,
  responses: {
    304: {
      description: "Not Modified: the client's copy (If-None-Match, If-Modified-Since) is current.",
      problem: false,
      methods: READS,
      headers: { ETag: ETAG, "Cache-Control": CACHE_CONTROL_HEADER },
    },
    412: { description: "If-Match or If-Unmodified-Since does not hold.", methods: READS },
  },
});

const WRITES = ["PUT", "PATCH", "DELETE"];

/**
 * What {@link assertPreconditions} reads, riding on a middleware that changes nothing: a write that calls it mounts
 * it (`use: [conditionalWriteDescribed]`), and `/openapi.json` lists If-Match, If-Unmodified-Since and If-None-Match
 * (RFC 9110 §13.1.1, §13.1.4, §13.1.2: on a write, a matching If-None-Match is a 412 too). The 412 itself is in the
 * operation's `responses` (CONDITIONAL_WRITE).
 */
export const conditionalWriteDescribed: Middleware = describeMiddleware((next: Handler) => next, {
  requestHeaders: {
    "If-Match": { description: "Change it only when one of these ETags is current (else 412).", methods: WRITES },
    "If-Unmodified-Since": {
      description: "Change it only when not modified since (else 412; ignored with If-Match).",
      methods: WRITES,
    },
    "If-None-Match": {
      description: "Change it only when none of these ETags is current; `*` matches any (else 412).",
      methods: WRITES,
    },
  },
});

/**
 * What {@link assertCollectionPreconditions} reads, for `/openapi.json`: a create mounts it (`use:
 * [conditionalCreateDescribed]`) and declares its 412 in `responses` (CONDITIONAL_WRITE).
 */
export const conditionalCreateDescribed: Middleware = describeMiddleware((next: Handler) => next, {
  requestHeaders: {
    "If-Match": {
      description: "Create only when one of these ETags is the collection's current one (its GET's ETag; else 412).",
      methods: ["POST"],
    },
    "If-Unmodified-Since": {
      description: "Create only when the collection is not modified since (else 412; ignored with If-Match).",
      methods: ["POST"],
    },
    "If-None-Match": {
      description: "Create only when none of these ETags is the collection's current one; `*` matches any (else 412).",
      methods: ["POST"],
    },
  },
});
