/** What one statement returned: its rows, and how many rows it affected where the client says so. */
export interface SqlResult {
  readonly rows: unknown[];
  readonly rowCount?: number | null;
  /** The command tag's verb where the client gives it (`pg`): `"ROLLBACK"` for a COMMIT that rolled back. */
  readonly command?: string;
}

/**
 * Anything that runs one parameterised SQL statement (`$1`, `$2`, …): a `pg` `Pool`, `Client` or `PoolClient`, a
 * PGlite instance or the `tx` of its `transaction()`, or the `pg` pool under your query builder (Kysely's
 * `PostgresDialect` pool, Drizzle's `db.$client`). Every store of this library takes one, and so does every
 * operation that should run inside your transaction.
 * @example
 * const store = new PostgresIdempotencyStore(pool);          // a pg.Pool
 * await transaction(pool, async (tx) => queue.withClient(tx).publish(event)); // a client inside a transaction
 */
export interface SqlClient {
  query(text: string, values?: unknown[]): Promise<SqlResult>;
}

/** A `pg` `Pool`: a client is checked out for each transaction. */
export interface SqlPool extends SqlClient {
  connect(): Promise<SqlClient & { release(error?: Error | boolean): void }>;
  readonly totalCount: number;
}

/** A PGlite instance: transactions through its own API (one connection: they run one at a time). */
export interface SqlTransactor extends SqlClient {
  transaction<T>(work: (tx: SqlClient) => Promise<T>): Promise<T>;
}

/** What {@link transaction} opens a transaction on: a pool, a single client, or PGlite. */
export type SqlDatabase = SqlClient | SqlPool | SqlTransactor;

type Probe = { [name: string]: unknown };

/** PGlite's instances and transactions have `exec`; `pg`'s objects do not. */
export function isPglite(client: SqlClient): boolean {
  return typeof (client as unknown as Probe)["exec"] === "function";
}

/** A `pg` Pool: it checks clients out (`connect`) and counts them; a `Client` or `PoolClient` does not count. */
export function isPool(client: SqlDatabase): client is SqlPool {
  const probe = client as unknown as Probe;
  return typeof probe["connect"] === "function" && typeof probe["release"] !== "function" && "totalCount" in probe;
}

/** Whether `client` takes `pg`'s query config objects (named prepared statements): `pg`'s Pool, Client, PoolClient. */
export function takesQueryConfig(client: SqlClient): boolean {
  return typeof (client as unknown as Probe)["connect"] === "function" && !isPglite(client);
}

/** Throws a TypeError naming `what` unless `client` can run statements. */
export function assertSqlClient(client: unknown, what: string): asserts client is SqlClient {
  if (typeof (client as Probe | null)?.["query"] !== "function") {
    throw new TypeError(
      `${what}: expected a PostgreSQL client with query(text, values) (a pg Pool, Client or PoolClient, or PGlite), got ${client === null ? "null" : typeof client}.`,
    );
  }
}
