/**
 * Times: every table keeps `timestamptz` columns (readable in psql, comparable with `now()`), written from the
 * caller's clock as epoch milliseconds (so an injected clock drives the database too) and read back as epoch
 * milliseconds. A `timestamptz` keeps microseconds, so a millisecond time round-trips exactly; a fraction of a
 * millisecond is dropped on the way in (`Math.floor`), as every store drops it.
 */

const MS_PER_DAY = 86_400_000;

/**
 * The SQL of a `timestamptz` from a parameter holding epoch milliseconds, e.g. `timestampOf("$3")`. Exact for every
 * instant of a Date: `to_timestamp(ms / 1000)` alone scales the seconds to microseconds in float8, whose step passes
 * half a millisecond beyond 2^42 s (year ~141,600), and such times came back 1 ms off. So whole days go through
 * `to_timestamp` (days × 86,400 × 10^6 µs is 2^13 × 10,546,875 × days: exact in float8 for 850 million days) and the
 * milliseconds left are added as an interval (below a day's: exact too).
 */
export function timestampOf(param: string): string {
  // Whole milliseconds, the fraction dropped: the rule every store keeps (src/webhooks/whole-ms.ts), so a fractional
  // clock is stored as memory stores it and read back exactly (`epochMsOf` rounds nothing then).
  const ms = `floor(${param}::float8)`;
  // Any whole number of days works: the rest, `ms - days * MS_PER_DAY`, is then exact in float8 (Sterbenz).
  const days = `trunc(${ms} / ${MS_PER_DAY})`;
  const exact = `to_timestamp(${days} * 86400) + (${ms} - ${days} * ${MS_PER_DAY}) * interval '1 millisecond'`;
  // ±Infinity stays ±infinity (a purge before Infinity takes everything), NaN the error and NULL the NULL it was:
  // PostgreSQL sorts NaN above Infinity, and a NULL comparison takes the ELSE.
  return `(CASE WHEN abs(${ms}) < 'Infinity' THEN ${exact} ELSE to_timestamp(${ms}) END)`;
}

/**
 * The SQL of a `timestamptz` column read as epoch milliseconds (a `float8`, which `pg` returns as a number). Exact:
 * `extract` answers a `numeric` (PostgreSQL 14 on).
 */
export function epochMsOf(column: string): string {
  return `round(extract(epoch from ${column}) * 1000)::float8`;
}
