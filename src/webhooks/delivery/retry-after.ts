import { parseHttpDate } from "../../caching/http-date";

/**
 * Parses a `Retry-After` value into a delay in ms from `now`; `undefined` when absent or malformed.
 * RFC 9110 §10.2.3: `Retry-After = HTTP-date / delay-seconds`. The date is an HTTP-date only (§5.6.7, all three
 * forms, always GMT): `Date.parse` also took "1.5" or "2026-12-01" as dates, and an asctime date as local time.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = parseHttpDate(trimmed, Number.isFinite(now) ? { now } : undefined);
  if (date === undefined) return undefined;
  return Math.max(0, date - now);
}
