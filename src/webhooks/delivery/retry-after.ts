/**
 * Parses a `Retry-After` value into a delay in ms from `now`; `undefined` when absent or malformed.
 * RFC 9110 §10.2.3: `Retry-After = HTTP-date / delay-seconds`.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
