/**
 * HTTP-date, RFC 9110 §5.6.7:
 *   HTTP-date    = IMF-fixdate / obs-date
 *   IMF-fixdate  = day-name "," SP date1 SP time-of-day SP GMT     ; Sun, 06 Nov 1994 08:49:37 GMT
 *   rfc850-date  = day-name-l "," SP date2 SP time-of-day SP GMT   ; Sunday, 06-Nov-94 08:49:37 GMT
 *   asctime-date = day-name SP date3 SP time-of-day SP year        ; Sun Nov  6 08:49:37 1994
 * All names are case-sensitive (%s). Anything else is not an HTTP-date and parses to `undefined`.
 */
import { finiteNumber } from "../options/number-option";
import { CachingError } from "./errors";
import { trimOws } from "./syntax";
import { timeValue } from "./time-value";

const MS_PER_DAY = 86_400_000;
const MAX_FORMATTABLE = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z: year is 4DIGIT
const MIN_FORMATTABLE = -62_167_219_200_000; // 0000-01-01T00:00:00Z

function pack(name: string): number {
  return (name.charCodeAt(0) << 16) | (name.charCodeAt(1) << 8) | name.charCodeAt(2);
}

const DAY_NAMES = new Set(["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map(pack));
const LONG_DAY_NAMES = new Set(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]);
const MONTHS = new Map(
  ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"].map((m, i) => [pack(m), i + 1]),
);

// Three characters packed like pack(); -1 when one is not ASCII, whose bits would spill into its neighbour's byte.
function packAt(s: string, i: number): number {
  const a = s.charCodeAt(i);
  const b = s.charCodeAt(i + 1);
  const c = s.charCodeAt(i + 2);
  return (a | b | c) > 0x7f ? -1 : (a << 16) | (b << 8) | c;
}

// The value of `count` DIGITs at `i`, or -1 when any one is not a DIGIT: §5.6.7 has no other characters there.
function digits(s: string, i: number, count: number): number {
  let n = 0;
  for (let j = i; j < i + count; j++) {
    const d = s.charCodeAt(j) - 0x30;
    if (!(d >= 0 && d <= 9)) return -1;
    n = n * 10 + d;
  }
  return n;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil); handles years 0-99,
// which Date.UTC would move to the 1900s.
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

// time-of-day = hour ":" minute ":" second ; 00:00:00 - 23:59:60 (leap second)
function timeOfDay(s: string, i: number): number {
  if (s.charCodeAt(i + 2) !== 0x3a || s.charCodeAt(i + 5) !== 0x3a) return -1;
  const hour = digits(s, i, 2);
  const minute = digits(s, i + 3, 2);
  const second = digits(s, i + 6, 2);
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60) return -1;
  return (hour * 3600 + minute * 60 + second) * 1000;
}

function toEpoch(year: number, month: number, day: number, time: number): number | undefined {
  if (day < 1 || day > daysInMonth(year, month) || time < 0) return undefined;
  return daysFromCivil(year, month, day) * MS_PER_DAY + time;
}

// IMF-fixdate: fixed width, 29 characters.
function imfFixdate(s: string): number | undefined {
  if (s.length !== 29 || !DAY_NAMES.has(packAt(s, 0))) return undefined;
  if (s.charCodeAt(3) !== 0x2c || s.charCodeAt(4) !== 0x20 || s.charCodeAt(7) !== 0x20) return undefined;
  if (s.charCodeAt(11) !== 0x20 || s.charCodeAt(16) !== 0x20 || s.charCodeAt(25) !== 0x20) return undefined;
  if (s.charCodeAt(26) !== 0x47 || s.charCodeAt(27) !== 0x4d || s.charCodeAt(28) !== 0x54) return undefined;
  const year = digits(s, 12, 4);
  const month = MONTHS.get(packAt(s, 8));
  if (year < 0 || month === undefined) return undefined;
  return toEpoch(year, month, digits(s, 5, 2), timeOfDay(s, 17));
}

// asctime-date: day-name SP month SP ( 2DIGIT / ( SP DIGIT ) ) SP time-of-day SP year; 24 characters.
function asctimeDate(s: string): number | undefined {
  if (s.length !== 24 || !DAY_NAMES.has(packAt(s, 0))) return undefined;
  if (s.charCodeAt(3) !== 0x20 || s.charCodeAt(7) !== 0x20 || s.charCodeAt(10) !== 0x20 || s.charCodeAt(19) !== 0x20) {
    return undefined;
  }
  const month = MONTHS.get(packAt(s, 4));
  const day = s.charCodeAt(8) === 0x20 ? digits(s, 9, 1) : digits(s, 8, 2);
  const year = digits(s, 20, 4);
  if (year < 0 || month === undefined) return undefined;
  return toEpoch(year, month, day, timeOfDay(s, 11));
}

// rfc850-date: day-name-l "," SP day "-" month "-" 2DIGIT SP time-of-day SP GMT.
function rfc850Date(s: string, now: number): number | undefined {
  const comma = s.indexOf(",");
  if (comma === -1 || !LONG_DAY_NAMES.has(s.slice(0, comma)) || s.length !== comma + 24) return undefined;
  const i = comma + 2;
  if (s.charCodeAt(comma + 1) !== 0x20 || s.charCodeAt(i + 2) !== 0x2d || s.charCodeAt(i + 6) !== 0x2d)
    return undefined;
  if (s.charCodeAt(i + 9) !== 0x20 || s.charCodeAt(i + 18) !== 0x20 || !s.endsWith("GMT")) return undefined;
  const month = MONTHS.get(packAt(s, i + 3));
  const yy = digits(s, i + 7, 2);
  const day = digits(s, i, 2);
  const time = timeOfDay(s, i + 10);
  if (month === undefined || yy < 0 || day < 1 || day > 31 || time < 0) return undefined;
  // §5.6.7: a timestamp that appears more than 50 years in the future means the most recent past year with
  // the same last two digits. The century is chosen on the calendar arithmetic alone and the date checked once
  // after: 29-Feb-00 read in 2025 is 2000, although 2100 (tried first) has no 29 February.
  const nowYear = new Date(now).getUTCFullYear();
  const limit = new Date(now).setUTCFullYear(nowYear + 50);
  // A `now` beyond the Date range has no year: no century can be chosen.
  if (Number.isNaN(limit)) return undefined;
  let year = nowYear - (nowYear % 100) + yy + 100;
  while (daysFromCivil(year, month, day) * MS_PER_DAY + time > limit) year -= 100;
  return toEpoch(year, month, day, time);
}

/** Options for {@link parseHttpDate}. */
export interface ParseHttpDateOptions {
  /**
   * The current time in epoch milliseconds, used only for the two-digit years of rfc850-date.
   * @default Date.now()
   */
  now?: number;
}

/**
 * Parses an HTTP-date (IMF-fixdate, rfc850-date or asctime-date) to epoch milliseconds.
 * Returns `undefined` for anything else, since §13.1.3/§13.1.4 require invalid dates to be ignored.
 * A leap second (`:60`) counts as the first second of the next minute; the day name is not checked
 * against the date.
 * @example parseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT") // 784111777000
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-5.6.7
 */
export function parseHttpDate(value: string, options?: ParseHttpDateOptions): number | undefined {
  const now = options?.now;
  if (now !== undefined) finiteNumber("parseHttpDate", "now", now, "epoch milliseconds");
  if (value.length === 29) return imfFixdate(value);
  if (value.length === 24) return asctimeDate(value);
  return rfc850Date(value, now ?? Date.now());
}

/**
 * Parses a field value holding one HTTP-date (If-Modified-Since, If-Unmodified-Since, Last-Modified, Date): the OWS
 * around a field value is not part of it (RFC 9110 §5.5), anything else around the date still makes it invalid.
 */
export function parseDateField(value: string, now: number | undefined): number | undefined {
  return parseHttpDate(trimOws(value), { now });
}

/**
 * Formats a time as IMF-fixdate, the form every sender must generate (§5.6.7); milliseconds are dropped.
 * @throws {CachingError} `invalid_date` for an invalid Date or a year outside 0000-9999.
 * @example formatHttpDate(784111777000) // "Sun, 06 Nov 1994 08:49:37 GMT"
 */
export function formatHttpDate(time: Date | number): string {
  const ms = timeValue("formatHttpDate", time);
  if (!(ms >= MIN_FORMATTABLE && ms <= MAX_FORMATTABLE)) {
    throw new CachingError("invalid_date", `Cannot format ${String(time)} as an HTTP-date (year 0000-9999).`);
  }
  return formatSeconds(ms);
}

/** {@link formatHttpDate} that answers `undefined` instead of throwing. */
export function tryFormatHttpDate(ms: number | undefined): string | undefined {
  return ms !== undefined && ms >= MIN_FORMATTABLE && ms <= MAX_FORMATTABLE ? formatSeconds(ms) : undefined;
}

// The last second formatted: a server sends the same few Date / Last-Modified values over and over, and
// formatting one costs about a microsecond, a hit a comparison.
let lastSecond = Number.NaN;
let lastText = "";

function formatSeconds(ms: number): string {
  // An HTTP-date has whole seconds (RFC 9110 §5.6.7): every time within one second formats the same.
  const second = Math.floor(ms / 1000);
  if (second !== lastSecond) {
    // ECMA-262 (Date.prototype.toUTCString) defines exactly the IMF-fixdate layout for years 0000-9999.
    lastText = new Date(ms).toUTCString();
    lastSecond = second;
  }
  return lastText;
}

/** Epoch milliseconds of a Date, a number or an HTTP-date string, truncated to whole seconds. */
export function toSeconds(time: Date | number | string | undefined, now?: number): number | undefined {
  if (time === undefined) return undefined;
  const ms = typeof time === "number" ? time : typeof time === "string" ? parseDateField(time, now) : time.getTime();
  if (ms === undefined || !Number.isFinite(ms)) return undefined;
  // HTTP-dates have one-second resolution: compare what the client could have seen.
  return Math.floor(ms / 1000) * 1000;
}
