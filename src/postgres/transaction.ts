import { untilAborted } from "../http/until-aborted";
import { isPglite, isPool, type SqlClient, type SqlDatabase, type SqlPool, type SqlTransactor } from "./sql-client";

function hasTransaction(db: SqlDatabase): db is SqlTransactor {
  return typeof (db as Partial<SqlTransactor>).transaction === "function";
}

// The clients inside a transaction this helper opened, with how many savepoints are open in it: a transaction
// passed again nests in a SAVEPOINT rather than sending BEGIN (a warning on pg, whose COMMIT would then end the
// outer transaction early).
const depths = new WeakMap<SqlClient, number>();

/** Runs `work` with `tx` marked as inside a transaction, for nested calls. */
async function inside<T>(tx: SqlClient, work: (tx: SqlClient) => Promise<T>): Promise<T> {
  depths.set(tx, 0);
  try {
    return await work(tx);
  } finally {
    depths.delete(tx);
  }
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
    const result = await inside(client, work);
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

/** `work` in a SAVEPOINT of the transaction `tx` is in: released on return, rolled back to on throw. */
async function nested<T>(tx: SqlClient, depth: number, work: (tx: SqlClient) => Promise<T>): Promise<T> {
  const savepoint = `rest_webhooks_${depth + 1}`;
  await tx.query(`SAVEPOINT ${savepoint}`);
  depths.set(tx, depth + 1);
  try {
    const result = await work(tx);
    await tx.query(`RELEASE SAVEPOINT ${savepoint}`);
    return result;
  } catch (error) {
    // A failed rollback leaves the outer transaction aborted: its own COMMIT or ROLLBACK reports it.
    await tx.query(`ROLLBACK TO SAVEPOINT ${savepoint}`).then(
      () => tx.query(`RELEASE SAVEPOINT ${savepoint}`),
      () => undefined,
    );
    throw error;
  } finally {
    depths.set(tx, depth);
  }
}

/**
 * Runs `work` in one transaction and commits it, or rolls it back when `work` throws (and rethrows). Pass what your
 * stores use: a `pg` Pool (a client is checked out for the transaction and released, or destroyed when its
 * connection broke), a `pg` Client (BEGIN/COMMIT on it: do not share it meanwhile), or PGlite (its own
 * `transaction`). Given a transaction's `tx` again (this helper's, `requestTransaction`'s, or PGlite's own), it
 * nests: `work` runs in a SAVEPOINT, released when it returns and rolled back to when it throws, so the nested
 * work commits or rolls back with the outer transaction, on every client alike. Nested calls on one `tx` run one
 * at a time, as statements on one connection do.
 * @param db where to open the transaction.
 * @param work what to run; give `tx` to every store that should write inside it (`store.withClient(tx)`).
 * @param options `signal`: stops waiting for `work` (see {@link TransactionOptions}).
 * @returns what `work` returned, once committed (nested: once its savepoint is released).
 * @example
 * const order = await transaction(pool, async (tx) => {
 *   await tx.query("INSERT INTO orders (id) VALUES ($1)", [id]);
 *   await queue.withClient(tx).publish(createEvent({ type: "order.created", data: { id } }));
 *   return { id };
 * });
 */
export async function transaction<T>(
  db: SqlDatabase,
  work: (tx: SqlClient) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const { signal } = options;
  if (signal?.aborted) throw signal.reason;
  const run = signal === undefined ? work : (tx: SqlClient) => untilAborted(work(tx), signal);
  const depth = depths.get(db);
  if (depth !== undefined) return nested(db, depth, run);
  if (hasTransaction(db)) return db.transaction((tx) => inside(tx, run));
  // A PGlite `tx` this helper did not open (your own `db.transaction`): it is inside a transaction all the same.
  if (isPglite(db)) return inside(db, (tx) => nested(tx, 0, run));
  if (!isPool(db)) return onClient(db, run);
  const client = await db.connect();
  if (signal?.aborted) {
    // Aborted while waiting for the pool: nothing ran on the connection, so it goes back as it came.
    client.release();
    throw signal.reason;
  }
  let failure: Error | undefined;
  let ended = false;
  const abort = () => {
    ended = true;
    endConnection(db, client, signal?.reason);
  };
  signal?.addEventListener("abort", abort, { once: true });
  try {
    return await onClient(client, run, (error) => {
      failure = error instanceof Error ? error : new Error(String(error));
    });
  } finally {
    signal?.removeEventListener("abort", abort);
    if (!ended) client.release(failure);
  }
}

/**
 * Ends a pooled transaction's connection at once: a ROLLBACK would wait behind a statement of `work` still running,
 * and whatever `work` sends afterwards must fail rather than run on a connection the pool has handed to someone else.
 * A backend notices a closed connection only when it next talks to it, so the one running a statement is ended too
 * (pg_terminate_backend, from another connection; best effort: without the right, it rolls back once its statement
 * ends), lest it hold the transaction's locks until then.
 */
function endConnection(pool: SqlPool, client: SqlClient & { release(error?: Error): void }, reason: unknown): void {
  const pid = (client as { processID?: unknown }).processID;
  client.release(reason instanceof Error ? reason : new Error("The transaction was aborted."));
  // The ended backend's last word (FATAL 57P01) can reach the connection while it closes. pg's pool listens on a
  // client it let go of and re-emits its errors on the pool, an uncaught exception where the pool has no 'error'
  // listener; this connection was ended on purpose, so its errors are dropped.
  const emitter = client as {
    removeAllListeners?: (event: "error") => unknown;
    on?: (event: "error", listener: () => void) => unknown;
  };
  emitter.removeAllListeners?.("error");
  emitter.on?.("error", () => undefined);
  if (typeof pid === "number") pool.query("SELECT pg_terminate_backend($1)", [pid]).catch(() => undefined);
}

/** Options of {@link transaction}. */
export interface TransactionOptions {
  /**
   * Stops waiting for `work` when it aborts: the transaction rolls back and `transaction` rejects with the signal's
   * reason, whatever `work` is doing. On a `pg` Pool the connection is closed at once (PostgreSQL rolls back, and
   * any statement `work` sends later fails); on a single `Client` or PGlite the rollback is sent once the statement
   * in flight ends, and statements `work` sends after that run outside the transaction: give work that may overrun
   * a Pool, or have it honour the signal.
   */
  signal?: AbortSignal | undefined;
}
