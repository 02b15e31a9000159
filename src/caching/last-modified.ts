/**
 * Last-Modified, RFC 9110 §8.8.2.
 */
import { CachingError } from "./errors";
import { formatHttpDate, parseDateField } from "./http-date";
import { timeValue } from "./time-value";

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
  const m = timeValue("formatLastModified", modified);
  const d = timeValue("formatLastModified", date);
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

/**
 * The epoch milliseconds of the `lastModified` a caller gives as a resource's current validator (a Date, epoch
 * milliseconds or an HTTP-date), or `undefined` for none. A value that is no time is refused rather than read as no
 * validator: If-Unmodified-Since would then be ignored (RFC 9110 §13.1.4), and a write the client guarded against a
 * lost update would go through. An ISO 8601 text (a JSON timestamp) is the usual mistake: the error says what to do.
 * @throws {CachingError} `invalid_date` naming `owner` and the value.
 */
export function validatorTime(
  owner: string,
  value: Date | number | string | undefined,
  now: number | undefined,
): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string") {
    const parsed = parseDateField(value, now);
    if (parsed !== undefined) return parsed;
    throw new CachingError(
      "invalid_date",
      `${owner}: lastModified ${JSON.stringify(value)} is not an HTTP-date (RFC 9110 §5.6.7, such as "Sun, 06 Nov 1994 08:49:37 GMT"): give a Date or epoch milliseconds (new Date(text) reads an ISO 8601 timestamp).`,
    );
  }
  const ms = typeof value === "number" ? value : value instanceof Date ? value.getTime() : Number.NaN;
  if (isTime(ms)) return ms;
  throw new CachingError(
    "invalid_date",
    `${owner}: lastModified must be a valid Date, epoch milliseconds or an HTTP-date, got ${value instanceof Date ? "an invalid Date" : String(value)}.`,
  );
}
