/**
 * If-Range, RFC 9110 §13.1.5 (§13.2.2 step 5):
 *   If-Range = entity-tag / HTTP-date
 */

import { finiteNumber } from "../options/number-option";
import { normalizeTag, parseEntityTag, strongCompare } from "./entity-tag";
import { parseHttpDate, toSeconds } from "./http-date";
import { validatorTime } from "./last-modified";
import { type ConditionalRequest, checkCurrent, type Validators } from "./preconditions";
import { trimOws } from "./syntax";

/** Options for {@link evaluateIfRange}. */
export interface IfRangeOptions {
  /**
   * Whether the server knows the representation cannot change twice within one second, which makes its
   * Last-Modified a strong validator (§8.8.2.2). Otherwise a date in If-Range is always false.
   * @default false
   */
  lastModifiedIsStrong?: boolean;
  /** The current time in epoch milliseconds, only for two-digit rfc850 years. @default Date.now() */
  now?: number;
}

/**
 * Step 5 of §13.2.2 for a request that passed the other preconditions: `"range"` when a Range header
 * should be processed (206), `"full"` when it must be ignored and the whole representation sent (200).
 * Range applies to GET only (§14.2); an If-Range without Range is ignored (§13.1.5).
 * @example evaluateIfRange({ method: "GET", headers: { range: "bytes=0-9", "if-range": '"a"' } }, { etag: '"a"' }) // "range"
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13.1.5
 */
export function evaluateIfRange(
  request: ConditionalRequest,
  current: Validators | undefined,
  options?: IfRangeOptions,
): "range" | "full" {
  // Checked whatever the request carries: a bad clock is the caller's bug, not for a client's dates to reveal.
  if (options?.now !== undefined) finiteNumber("evaluateIfRange", "now", options.now, "epoch milliseconds");
  checkCurrent("evaluateIfRange", current);
  const lastModified = validatorTime("evaluateIfRange", current?.lastModified, options?.now);
  const { headers } = request;
  if (request.method !== "GET" || headers.range === undefined) return "full";
  const ifRange = headers["if-range"];
  if (ifRange === undefined) return "range";
  if (current === undefined) return "full";
  // §5.6.3: only OWS surrounds the value; `"a"` followed by NBSP is invalid, so false (§13.1.5): the whole 200.
  const value = trimOws(ifRange);
  const tag = parseEntityTag(value);
  if (tag !== undefined) {
    const etag = current.etag;
    const currentValue = typeof etag === "string" ? normalizeTag(etag) : etag;
    // §13.1.5: entity tags compare with the strong function, so a weak tag never matches.
    return currentValue !== undefined && strongCompare(tag, currentValue) ? "range" : "full";
  }
  const date = parseHttpDate(value, { now: options?.now });
  if (date === undefined || options?.lastModifiedIsStrong !== true) return "full";
  // §13.1.5: the date must exactly match the Last-Modified field value.
  return toSeconds(lastModified) === date ? "range" : "full";
}
