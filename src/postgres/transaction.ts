import { AsyncLocalStorage } from "node:async_hooks";
import { untilAborted } from "../http/until-aborted";
import {
  isPglite,
  isPool,
  type SqlClient,
  type SqlDatabase,
  type SqlPool,
  type SqlResult,
  type SqlTransactor,
} from "./sql-client";

function hasTransaction(db: SqlDatabase): db is SqlTransactor {
  return typeof (db as Partial<SqlTransactor>).transaction === "function";
}

/** Calls that take turns: each waits for the one before it to settle. */
interface Turns {
  /** Settles once every call queued so far has: the next one waits for it. */
  tail: Promise<void>;
}

/**
 * A transaction this helper is running on `tx` (depth 0), or a savepoint in it. A transaction passed again nests in
 * a SAVEPOINT rather than sending BEGIN (a warning on pg, whose COMMIT would then end the outer transaction early).
 * Its `tail` queues the nested calls made at this level.
 */
interface Level extends Turns {
  readonly tx: SqlClient;
  readonly depth: number;
  /** The level the code that opened this one ran in (any client's): the chain {@link levelOf} walks. */
  readonly enclosing: Level | undefined;
  open: boolean;
}

// The transactions this helper opened, by client: on a connection only they hold (a Pool's, PGlite's `tx`).
const opened = new WeakMap<SqlClient, Level>();
// The savepoint the running code is inside. Its `tx` is the outer one's own object, so only the async context can
// tell a call from inside the nested work (it nests deeper) from one beside it (it waits its turn). So is the
// transaction on a `pg` Client that callers share: the object is theirs too.
const within = new AsyncLocalStorage<Level>();
// The turns of the transactions on each shared `pg` Client (or PoolClient passed as it is).
const clientTurns = new WeakMap<SqlClient, Turns>();

/** The innermost open level on `tx` the calling code runs in; else the transaction open on `tx`, if any. */
function levelOf(tx: SqlClient): Level | undefined {
  for (let level = within.getStore(); level !== undefined; level = level.enclosing) {
    if (level.tx === tx && level.open) return level;
  }
  return opened.get(tx);
}

function levelFor(tx: SqlClient, depth: number): Level {
  return { tx, depth, enclosing: within.getStore(), tail: Promise.resolve(), open: true };
}

/**
 * Runs `work` with `tx` marked as inside a transaction, for nested calls. On a `shared` client only the code running
 * inside `work` (its async context) is: another caller's call on the object waits its turn instead.
 */
async function inside<T>(tx: SqlClient, work: (tx: SqlClient) => Promise<T>, shared = false): Promise<T> {
  const level = levelFor(tx, 0);
  if (!shared) opened.set(tx, level);
  try {
    return await (shared ? within.run(level, () => work(tx)) : work(tx));
  } finally {
    level.open = false;
    if (opened.get(tx) === level) opened.delete(tx);
  }
}

/**
 * `work` once the calls queued on `turns` before it have settled; `signal` also ends the wait, and then `work` never
 * runs. The next call waits for this one and, should this one give up while waiting, for those before it.
 */
async function inTurn<T>(turns: Turns, signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
  const turn = turns.tail;
  let settled!: () => void;
  const done = new Promise<void>((resolve) => (settled = resolve));
  turns.tail = turn.then(() => done);
  try {
    await (signal === undefined ? turn : untilAborted(turn, signal));
    if (signal?.aborted) throw signal.reason;
    return await work();
  } finally {
    settled();
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
  shared = false,
): Promise<T> {
  await client.query("BEGIN");
  let result: T;
  let commit: SqlResult;
  try {
    result = await inside(client, work, shared);
    commit = await client.query("COMMIT");
  } catch (error) {
    try {
      await client.query("ROLLBACK");
    } catch (failed) {
      broken(failed);
    }
    throw error;
  }
  // PostgreSQL ends a transaction a failed statement aborted (work caught its error) with a rollback, answering COMMIT
  // with the tag ROLLBACK rather than an error: nothing committed, so it must not read as success.
  if (commit.command === "ROLLBACK") throw new RolledBackAtCommit();
  return result;
}

/**
 * `transaction` could not commit: a statement of `work` failed and aborted the transaction, and `work` went on
 * (it caught the error), so PostgreSQL rolled everything back at COMMIT. The code is the SQLSTATE PGlite's own
 * `transaction` rejects with in that case (25P02, in_failed_sql_transaction), so callers see one code on every client.
 */
class RolledBackAtCommit extends Error {
  override readonly name = "TransactionRolledBackError";
  readonly code = "25P02";
  constructor() {
    super("The transaction was rolled back instead of committed: a statement in it had failed.");
  }
}

/**
 * `work` in a SAVEPOINT of `outer`, once the nested calls made before it at that level have settled: PostgreSQL's
 * savepoints form a stack, and releasing or rolling back to one ends every savepoint set after it, so two open side
 * by side would end or undo each other's. `signal` also covers the wait for its turn.
 */
function nested<T>(outer: Level, work: (tx: SqlClient) => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  return inTurn(outer, signal, () => inSavepoint(levelFor(outer.tx, outer.depth + 1), work));
}

/** `work` in the savepoint of `level`: released on return, rolled back to on throw. */
async function inSavepoint<T>(level: Level, work: (tx: SqlClient) => Promise<T>): Promise<T> {
  const { tx } = level;
  const savepoint = `rest_webhooks_${level.depth}`;
  await tx.query(`SAVEPOINT ${savepoint}`);
  try {
    const result = await within.run(level, () => work(tx));
    level.open = false;
    await tx.query(`RELEASE SAVEPOINT ${savepoint}`);
    return result;
  } catch (error) {
    level.open = false;
    // A failed rollback leaves the outer transaction aborted: its own COMMIT or ROLLBACK reports it.
    await tx.query(`ROLLBACK TO SAVEPOINT ${savepoint}`).then(
      () => tx.query(`RELEASE SAVEPOINT ${savepoint}`),
      () => undefined,
    );
    throw error;
  }
}

/**
 * A transaction on a `pg` Client (or a PoolClient passed as it is): one connection its callers share, so one started
 * beside another waits for it to end (BEGIN on top would only warn, and the two would commit or roll back as one),
 * as PGlite's do and as statements on it do. Only the code running inside `work` nests (see {@link inside}).
 */
function onSharedClient<T>(client: SqlClient, work: (tx: SqlClient) => Promise<T>, signal?: AbortSignal): Promise<T> {
  let turns = clientTurns.get(client);
  if (turns === undefined) {
    turns = { tail: Promise.resolve() };
    clientTurns.set(client, turns);
  }
  return inTurn(turns, signal, () => onClient(client, work, undefined, true));
}

/**
 * Runs `work` in one transaction and commits it, or rolls it back when `work` throws (and rethrows). Pass what your
 * stores use: a `pg` Pool (a client is checked out for the transaction and released, or destroyed when its
 * connection broke), a `pg` Client (BEGIN/COMMIT on it; transactions started on it together run one after the
 * other, as PGlite's do), or PGlite (its own `transaction`). Given a transaction's `tx` again (this helper's, `requestTransaction`'s, or PGlite's own), it
 * nests: `work` runs in a SAVEPOINT, released when it returns and rolled back to when it throws, so the nested
 * work commits or rolls back with the outer transaction, on every client alike. Nested calls on one `tx` run one
 * at a time, as statements on one connection do: each waits for the one before it to settle before its SAVEPOINT,
 * so calls started together (`Promise.all`) each commit or roll back only their own writes; one made inside a
 * nested call's `work` nests in its savepoint instead.
 * @param db where to open the transaction.
 * @param work what to run; give `tx` to every store that should write inside it (`store.withClient(tx)`).
 * @param options `signal`: stops waiting for a connection, a turn (a nested call's, a Client's, PGlite's) or
 * `work` (see {@link TransactionOptions}).
 * @returns what `work` returned, once committed (nested: once its savepoint is released).
 * @throws what `work` threw; or, when a statement failed and `work` caught its error and returned, an error with
 *   `code` "25P02" (PostgreSQL rolled the transaction back at COMMIT, as PGlite's own `transaction` reports it).
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
  // Checked again when `work` is due: the signal may abort while a connection, a turn or PGlite's lock is awaited.
  const run =
    signal === undefined
      ? work
      : (tx: SqlClient) => (signal.aborted ? Promise.reject(signal.reason) : untilAborted(work(tx), signal));
  const level = levelOf(db);
  if (level !== undefined) return nested(level, run, signal);
  if (hasTransaction(db)) {
    // PGlite queues its transactions behind one lock: the signal ends that wait too, and `run` then refuses to start.
    const pending = db.transaction((tx) => inside(tx, run));
    return signal === undefined ? pending : untilAborted(pending, signal);
  }
  if (isPglite(db)) {
    // A PGlite `tx` this helper did not open (your own `db.transaction`): it is inside a transaction all the same,
    // until its end, which this helper cannot see; the level is kept as long as the `tx`, so its calls queue too.
    const own = levelFor(db, 0);
    opened.set(db, own);
    return nested(own, run, signal);
  }
  if (!isPool(db)) return onSharedClient(db, run, signal);
  const client = signal === undefined ? await db.connect() : await connectUnlessAborted(db, signal);
  if (signal?.aborted) {
    // Aborted as the connection came: nothing ran on it, so it goes back as it came.
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
 * A pooled connection, or a rejection with the signal's reason as soon as `signal` aborts while the pool has none
 * free. The pool hands a connection to that wait all the same once one frees: it goes straight back, unused.
 */
async function connectUnlessAborted(pool: SqlPool, signal: AbortSignal): ReturnType<SqlPool["connect"]> {
  const connecting = pool.connect();
  try {
    return await untilAborted(connecting, signal);
  } catch (error) {
    connecting.then(
      (client) => client.release(),
      () => undefined,
    );
    throw error;
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
   * in flight ends, and statements `work` sends after that run outside the transaction (on a `Client`, inside the
   * transaction of the next caller, if one has begun; on PGlite they fail): give work that may overrun a Pool, or
   * have it honour the signal. Before `work` starts it also ends the wait for a `pg` Pool's connection (the one the pool
   * hands over later goes back to it unused), or for the turn of a nested call, of a transaction on a `Client` or
   * of one on PGlite: `work` then never runs.
   */
  signal?: AbortSignal | undefined;
}
