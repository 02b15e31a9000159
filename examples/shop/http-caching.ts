import {
  etagFromVersion,
  evaluatePreconditions,
  formatCacheControl,
  formatLastModified,
  preconditionProblem,
  preconditionResponse,
  type Validators,
} from "rest-webhooks/caching";
import { type HttpRequest, type HttpResponse, json, type ResponseHeaders } from "rest-webhooks/http";

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

/** ETag, Last-Modified (never after now, RFC 9110 §8.8.2.1) and Cache-Control for a record's representation. */
export function cachingHeaders(record: Versioned, now: number): ResponseHeaders {
  return {
    etag: etagFromVersion(record.version, { weak: false }),
    "last-modified": formatLastModified(record.updatedAt, now),
    "cache-control": CACHE_CONTROL,
  };
}

/** Cache-Control for representations whose validators are computed from the body (lists). */
export const LIST_CACHE_CONTROL = CACHE_CONTROL;

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
