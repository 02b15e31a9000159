import { isPglite, isPool, type SqlClient, type SqlDatabase, type SqlTransactor } from "./sql-client";

function hasTransaction(db: SqlDatabase): db is SqlTransactor {
  return typeof (db as Partial<SqlTransactor>).transaction === "function";
}

/**
 * BEGIN, `work`, COMMIT on one client; ROLLBACK when anything throws. Reports a connection that could not roll back
 * (it is in an unknown state) through `broken`, so a pooled one is destroyed rather than reused.
 */
async function onClient<T>(
  client: SqlClient,
  work: (tx: SqlClient) => Promise<T>,
  broken: (error: unknown) => void = () => {},
): Promise<T> {
  await client.query("BEGIN");
  try {
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    try {
      await client.query("ROLLBACK");
    } catch (failed) {
      broken(failed);
    }
    throw error;
  }
}

/**
 * Runs `work` in one transaction and commits it, or rolls it back when `work` throws (and rethrows). Pass what your
 * stores use: a `pg` Pool (a client is checked out for the transaction and released, or destroyed when its
 * connection broke), a `pg` Client (BEGIN/COMMIT on it: do not share it meanwhile), or PGlite (its own
 * `transaction`). A PGlite transaction passed again runs `work` inside it (PGlite has one connection, so no
 * second transaction can be opened beside it).
 * @param db where to open the transaction.
 * @param work what to run; give `tx` to every store that should write inside it (`store.withClient(tx)`).
 * @returns what `work` returned, once committed.
 * @example
 * const order = await transaction(pool, async (tx) => {
 *   await tx.query("INSERT INTO orders (id) VALUES ($1)", [id]);
 *   await queue.withClient(tx).publish(createEvent({ type: "order.created", data: { id } }));
 *   return { id };
 * });
 */
export async function transaction<T>(db: SqlDatabase, work: (tx: SqlClient) => Promise<T>): Promise<T> {
  if (hasTransaction(db)) return db.transaction(work);
  if (isPglite(db)) return work(db);
  if (!isPool(db)) return onClient(db, work);
  const client = await db.connect();
  let failure: Error | undefined;
  try {
    return await onClient(client, work, (error) => {
      failure = error instanceof Error ? error : new Error(String(error));
    });
  } finally {
    client.release(failure);
  }
}
