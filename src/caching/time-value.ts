import { describeOption } from "../options/refuse-option";
import { CachingError } from "./errors";

/**
 * The epoch milliseconds of a `Date` or a number, for the functions that format a time. Anything else (an ISO string
 * read from a database row, `null`) is a `CachingError` `invalid_date` naming the function and the value, where
 * `time.getTime()` threw a bare "getTime is not a function". Range and finiteness are the caller's to check.
 */
export function timeValue(owner: string, time: unknown): number {
  if (typeof time === "number") return time;
  if (time instanceof Date) return time.getTime();
  throw new CachingError(
    "invalid_date",
    `${owner}: the time must be a Date or epoch milliseconds, got ${describeOption(time)} (for text, pass new Date(text)).`,
  );
}
