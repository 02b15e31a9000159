import type { Handler, HttpRequest, HttpResponse } from "../http/message";
import { isSafe } from "../http/methods";
import { isThenable } from "../http/thenable";
import type { SqlClient, SqlDatabase } from "./sql-client";
import { transaction } from "./transaction";

/**
 * Where a request carries its open transaction: a symbol-keyed property (`Symbol.for`, so the ESM and CJS copies of
 * the package agree); a request that cannot take one (frozen) uses the map.
 */
const TRANSACTION: unique symbol = Symbol.for("rest-webhooks.request-transaction");
type Carrier = HttpRequest & { [TRANSACTION]?: SqlClient };
const frozen = new WeakMap<HttpRequest, SqlClient>();

/**
 * The transaction `requestTransaction` opened for this request, for the middleware and handler inside it;
 * `undefined` outside one.
 * @example const client = transactionOf(request) ?? pool;
 */
export function transactionOf(request: HttpRequest): SqlClient | undefined {
  return (request as Carrier)[TRANSACTION] ?? frozen.get(request);
}

/** Options of {@link requestTransaction}. */
export interface RequestTransactionOptions {
  /**
   * Which requests run in a transaction: a list of methods or a test of the upper-case method.
   * @default every method that is not safe (RFC 9110 §9.2.1): POST, PUT, PATCH, DELETE and extension methods
   */
  methods?: readonly string[] | ((method: string) => boolean);
  /**
   * Called once a request's transaction committed (e.g. to wake a delivery worker for the events it published). What
   * it throws (or a promise it returns rejects with) goes to `onCommitError`: the write took effect, so the response
   * stands.
   */
  onCommit?: (request: HttpRequest) => void;
  /**
   * Told when `onCommit` throws or rejects. The client still gets the handler's response: answering 500 for a
   * committed write would invite a retry that repeats it. Pass your logger here, or `() => {}` to stay silent.
   * @default one `console.error` line with the error (stderr on Node, the log on Workers)
   */
  onCommitError?: (error: unknown, request: HttpRequest) => void;
}

function logCommitError(error: unknown): void {
  console.error("rest-webhooks: requestTransaction's onCommit failed after the commit", error);
}

/** Runs `onCommit`, reporting what it throws or rejects with: after COMMIT the response stands, whatever it does. */
function afterCommit(
  onCommit: (request: HttpRequest) => void,
  onCommitError: (error: unknown, request: HttpRequest) => void,
  request: HttpRequest,
): void {
  const report = (error: unknown) => {
    try {
      onCommitError(error, request);
    } catch (failure) {
      // Nobody else to tell, and the response must not change: as the adapters do with a throwing `onError`.
      console.error("rest-webhooks: onCommitError threw while reporting an error", { failure, error });
    }
  };
  try {
    const outcome: unknown = onCommit(request);
    if (isThenable(outcome)) Promise.resolve(outcome).then(undefined, report);
  } catch (error) {
    report(error);
  }
}

// A 5xx response is a failure the handler returned rather than threw: its writes are rolled back all the same.
class RolledBack {
  constructor(readonly response: HttpResponse) {}
}

/**
 * Middleware running each request in one database transaction that everything inside it shares through
 * {@link transactionOf}: commits when the response is below 500, rolls back a 5xx response or a thrown error (which
 * goes on). Mounted outside `idempotency()` with a store per request, the key's record, the resource and its events
 * commit together or not at all: a retry after a crash finds either everything or nothing (exactly once).
 * @param db a `pg` Pool or PGlite (see `SqlDatabase`). A single `pg` Client works too, its requests' transactions
 *   taking turns (one at a time, as on PGlite); a Pool runs them side by side.
 * @example
 * router.use(
 *   requestTransaction(pool),
 *   idempotency({ store: (request) => store.withClient(transactionOf(request) ?? pool), identify }),
 * );
 */
export function requestTransaction(
  db: SqlDatabase,
  options: RequestTransactionOptions = {},
): (next: Handler) => Handler {
  if (typeof (db as Partial<SqlClient> | null)?.query !== "function") {
    throw new TypeError("requestTransaction: db must be a pg Pool or PGlite (SqlDatabase)");
  }
  const { methods, onCommit } = options;
  const onCommitError = options.onCommitError ?? logCommitError;
  const covers =
    methods === undefined
      ? (method: string) => !isSafe(method)
      : typeof methods === "function"
        ? methods
        : (method: string) => methods.includes(method);
  return (next) => async (request) => {
    if (!covers(request.method)) return next(request);
    let response: HttpResponse;
    try {
      response = await transaction(db, async (tx) => {
        if (Object.isExtensible(request)) (request as Carrier)[TRANSACTION] = tx;
        else frozen.set(request, tx);
        const answer = await next(request);
        if (answer.status >= 500) throw new RolledBack(answer);
        return answer;
      });
    } catch (error) {
      if (error instanceof RolledBack) return error.response;
      throw error;
    } finally {
      if (Object.isExtensible(request)) delete (request as Carrier)[TRANSACTION];
      else frozen.delete(request);
    }
    if (onCommit !== undefined) afterCommit(onCommit, onCommitError, request);
    return response;
  };
}
