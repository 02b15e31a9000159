/** A query as `pg` takes it; `name` makes it a prepared statement on each connection. */
export interface PgQuery {
  text: string;
  values?: unknown[];
  name?: string;
}

/**
 * What the store needs from `pg`: a `Pool`, a `PoolClient` or a `Client` all fit. Pass the client
 * of an open transaction and the record shares it: it commits or rolls back with the business data.
 */
export interface PgQueryable {
  query(query: PgQuery): Promise<{ rows: unknown[]; rowCount: number | null }>;
}
