/**
 * The channel the PostgreSQL delivery queue of `schema` notifies when deliveries may have come due sooner than its
 * workers expect: a publish, a manual retry (`update`), a delivery handed back due at once. PostgreSQL refuses a channel
 * name of 64 bytes or more (NAMEDATALEN), so a long schema's is cut to 63: two schemas that share their first 44
 * characters share a channel, which costs their workers a claim that finds nothing, nothing more. Internal.
 */
export function deliveryChannel(schema: string): string {
  return `webhook_deliveries.${schema}`.slice(0, 63);
}

/**
 * `statement` (an INSERT or UPDATE … RETURNING id) made to also notify the channel in the parameter `channel` once,
 * when it wrote any row. PostgreSQL sends a notification at the commit of the transaction that made it, and never for
 * one rolled back ("NOTIFY", Notes), so a publish inside a caller's transaction wakes the workers once its rows can be
 * claimed. The answer keeps the statement's rows: one per row written. Internal.
 */
export function notifyingStatement(statement: string, channel: string): string {
  // An uncommon form on purpose: a WITH query that is not referenced is never run, and a scalar subquery in the select
  // list is run once, for the first row; with no row written there is no row, so no notification.
  return `WITH written AS (${statement}) SELECT id, (SELECT pg_notify(${channel}, 'due') FROM written LIMIT 1) AS told FROM written`;
}
