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
