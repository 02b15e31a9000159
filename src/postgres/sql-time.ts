/**
 * Times: every table keeps `timestamptz` columns (readable in psql, comparable with `now()`), written from the
 * caller's clock as epoch milliseconds (so an injected clock drives the database too) and read back as epoch
 * milliseconds. A `timestamptz` keeps microseconds, so a millisecond time round-trips exactly.
 */

/** The SQL of a `timestamptz` from a parameter holding epoch milliseconds, e.g. `timestampOf("$3")`. */
export function timestampOf(param: string): string {
  return `to_timestamp(${param}::float8 / 1000)`;
}

/** The SQL of a `timestamptz` column read as epoch milliseconds (a `float8`, which `pg` returns as a number). */
export function epochMsOf(column: string): string {
  return `round(extract(epoch from ${column}) * 1000)::float8`;
}
