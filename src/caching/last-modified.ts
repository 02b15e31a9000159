/**
 * Last-Modified, RFC 9110 §8.8.2.
 */
import { CachingError } from "./errors";
import { formatHttpDate } from "./http-date";

const MAX_TIME = 8.64e15; // ECMA-262 TimeClip: the times a Date can hold.

function isTime(ms: number): boolean {
  return ms >= -MAX_TIME && ms <= MAX_TIME;
}

/**
 * Formats a Last-Modified value that is never later than the message's origination time: §8.8.2.1 requires
 * a modification time in the future to be replaced by the Date of the response.
 * @param modified the representation's last modification time.
 * @param date the response's Date (the time the message originates), usually the current time.
 * @throws {CachingError} `invalid_date` for a time that is NaN, infinite or outside the Date range.
 * @example formatLastModified(new Date("2030-01-01"), Date.parse("2024-05-01T00:00:00Z")) // "Wed, 01 May 2024 00:00:00 GMT"
 */
export function formatLastModified(modified: Date | number, date: Date | number): string {
  const m = typeof modified === "number" ? modified : modified.getTime();
  const d = typeof date === "number" ? date : date.getTime();
  // Not a time: an infinite `modified` would otherwise lose to `date` in Math.min and pass for a real one.
  if (!isTime(m) || !isTime(d)) throw new CachingError("invalid_date", "Last-Modified needs valid times.");
  return formatHttpDate(Math.min(m, d));
}

/**
 * The Last-Modified value to send once the second of the change is over, and `undefined` before. An HTTP-date counts
 * whole seconds, so a second change within the same second would carry the same date: If-Modified-Since would then
 * answer 304 to a stale copy, and If-Unmodified-Since let a lost update through. A date in the second of the
 * response's Date cannot be a strong validator (RFC 9110 §8.8.2.2); once that second is over, any later change
 * carries a later date. Send an ETag as well: it validates at once.
 * @param modified the representation's last modification time.
 * @param date the response's Date, usually the current time.
 * @throws {CachingError} `invalid_date` for a time that is NaN, infinite or outside the Date range.
 * @example settledLastModified(Date.parse("2024-05-01T00:00:00.300Z"), Date.parse("2024-05-01T00:00:00.900Z")) // undefined
 * @example settledLastModified(Date.parse("2024-05-01T00:00:00.300Z"), Date.parse("2024-05-01T00:00:01Z")) // "Wed, 01 May 2024 00:00:00 GMT"
 */
export function settledLastModified(modified: Date | number, date: Date | number): string | undefined {
  const formatted = formatLastModified(modified, date);
  const m = typeof modified === "number" ? modified : modified.getTime();
  const d = typeof date === "number" ? date : date.getTime();
  return Math.floor(m / 1000) < Math.floor(d / 1000) ? formatted : undefined;
}
