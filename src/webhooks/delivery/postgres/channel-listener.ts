import { quoteIdentifier } from "../../../postgres/identifier";
import { isPglite, isPool, type SqlClient } from "../../../postgres/sql-client";
import { asError, type PgListener, SharedPgListener, tellError } from "./shared-pg-listener";

/** What a `pg` Pool keeps of how it makes its clients (pg-pool: `this.Client`, `this.options`). */
interface PgPoolFactory {
  Client: new (options: unknown) => PgListener;
  options: unknown;
}

/** What PGlite has for LISTEN (`PGlite.listen`): the callback gets each payload, the promise what unlistens. */
interface PgliteListener extends SqlClient {
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}

/**
 * How a PostgreSQL store listens for other processes' writes (`PostgresEndpointStoreOptions.listen`,
 * `PostgresDeliveryQueueOptions.listen`).
 */
export interface ListenOptions {
  /** Told of a listening connection that failed or was lost; the store connects again after `retryMs`. */
  onError?: ((error: Error) => void) | undefined;
  /** How long after a failure it connects again, doubled after each failure in a row, at most 30 s. @default 1000 */
  retryMs?: number | undefined;
}

/**
 * A store's `listen` option, checked: `undefined` when it is off (`false`), else the options (`{}` for `true` or
 * none). Internal.
 * @throws TypeError naming the option, for anything else.
 */
export function listenOptions(owner: string, listen: boolean | ListenOptions | undefined): ListenOptions | undefined {
  if (listen === false) return undefined;
  if (listen === undefined || listen === true) return {};
  if (typeof listen !== "object" || listen === null) {
    throw new TypeError(`${owner}: listen must be a boolean or an object, got ${typeof listen}.`);
  }
  if (listen.onError !== undefined && typeof listen.onError !== "function") {
    throw new TypeError(`${owner}: listen.onError must be a function.`);
  }
  if (listen.retryMs !== undefined && !(Number.isFinite(listen.retryMs) && listen.retryMs > 0)) {
    throw new TypeError(`${owner}: listen.retryMs must be a positive number, got ${String(listen.retryMs)}.`);
  }
  return listen;
}

/** The store's listen options, and what it is told when it hears again after a loss. Internal. */
interface ListenHooks extends ListenOptions {
  onResumed?: (() => void) | undefined;
}

// One listening connection per pool, shared by every listen on it, while there are any.
const listeners = new WeakMap<object, SharedPgListener>();

/**
 * Listens on `channel` and calls `onPayload` with each notification's payload (not empty), from writes of any
 * process. On a `pg` Pool it listens on the pool's one listening connection, opened with the pool's settings outside
 * the pool (so it takes none of the pool's clients, and `pool.end()` does not wait for it) and shared by every listen
 * on that pool (SharedPgListener); PGlite listens on itself. Anything else (a
 * single `pg` Client the caller queries on) is not listened on: `undefined`. A lost connection is opened again after
 * `retryMs`; writes made meanwhile are not told (`onResumed` says when it hears again). Returns what stops
 * listening and closes the connection. Internal.
 */
export function listenOnChannel(
  client: SqlClient,
  channel: string,
  onPayload: (payload: string) => void,
  options: ListenHooks = {},
): (() => void) | undefined {
  if (isPglite(client) && typeof (client as Partial<PgliteListener>).listen === "function") {
    return listenOnPglite(client as PgliteListener, channel, onPayload, options);
  }
  const factory = client as unknown as Partial<PgPoolFactory>;
  if (isPool(client) && typeof factory.Client === "function") {
    let shared = listeners.get(client);
    if (shared === undefined) {
      const created = new SharedPgListener(
        () => new (factory as PgPoolFactory).Client(factory.options),
        () => {
          if (listeners.get(client) === created) listeners.delete(client);
        },
      );
      listeners.set(client, created);
      shared = created;
    }
    return shared.add({ channel, onPayload, ...options });
  }
  return undefined;
}

function listenOnPglite(
  db: PgliteListener,
  channel: string,
  onPayload: (payload: string) => void,
  options: ListenHooks,
): () => void {
  let stopped = false;
  // PGlite writes the name into LISTEN as given, and matches notifications by it unquoted.
  const unlisten = db.listen(quoteIdentifier(channel), (payload) => {
    if (!stopped && payload !== "") onPayload(payload);
  });
  unlisten.catch((error: unknown) => tellError(options.onError, asError(error)));
  return () => {
    stopped = true;
    unlisten.then((stop) => stop()).catch(() => {});
  };
}
