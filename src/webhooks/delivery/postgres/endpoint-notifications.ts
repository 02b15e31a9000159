/**
 * The channel that migration delivery@16's triggers notify with the id of each endpoint row written in `schema`.
 * PostgreSQL refuses a channel name of 64 bytes or more (NAMEDATALEN), so a long schema's is cut to 63: two schemas
 * that share their first 45 characters share a channel, which costs their watchers a cache drop, nothing more.
 * Internal.
 */
export function endpointChannel(schema: string): string {
  return `webhook_endpoints.${schema}`.slice(0, 63);
}
