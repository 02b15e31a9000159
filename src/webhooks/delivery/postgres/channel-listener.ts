import { quoteIdentifier } from "../../../postgres/identifier";
import { isPglite, isPool, type SqlClient } from "../../../postgres/sql-client";

/** A `pg` client of its own, as the pool makes them (`new pool.Client(pool.options)`): its events, and `end`. */
interface PgListener extends SqlClient {
  connect(): Promise<unknown>;
  end(): Promise<unknown>;
  on(event: "notification", listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: "error" | "end", listener: (error?: Error) => void): unknown;
}

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

const MAX_RETRY_MS = 30_000;

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

/**
 * Listens on `channel` and calls `onPayload` with each notification's payload (not empty), from writes of any
 * process. On a `pg` Pool it opens one connection of its own with the pool's settings, outside the pool (so it takes
 * none of the pool's clients, and `pool.end()` does not wait for it); PGlite listens on itself. Anything else (a
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
    return listenOnPg(() => new (factory as PgPoolFactory).Client(factory.options), channel, onPayload, options);
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
  unlisten.catch((error: unknown) => options.onError?.(asError(error)));
  return () => {
    stopped = true;
    unlisten.then((stop) => stop()).catch(() => {});
  };
}

function listenOnPg(
  newClient: () => PgListener,
  channel: string,
  onPayload: (payload: string) => void,
  options: ListenHooks,
): () => void {
  const firstRetryMs = options.retryMs ?? 1_000;
  let retryMs = firstRetryMs;
  let stopped = false;
  let held: PgListener | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Set by a loss (or a first connection that failed), cleared once LISTEN runs again: then told as resumed.
  let missed = false;

  const close = (connection: PgListener) => {
    connection.end().catch(() => {});
  };
  const lost = (connection: PgListener, error: Error) => {
    if (held !== connection) return;
    held = undefined;
    close(connection);
    if (stopped) return;
    missed = true;
    options.onError?.(error);
    timer = setTimeout(open, retryMs);
    // A listener waiting to connect again must not keep the process alive: the worker stops it when it stops.
    timer.unref?.();
    retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
  };
  const open = async () => {
    timer = undefined;
    const connection = newClient();
    held = connection;
    // Attached before anything runs on it: an 'error' event without a listener would end the process.
    connection.on("error", (error) => lost(connection, asError(error ?? new Error("connection lost"))));
    connection.on("end", () => lost(connection, new Error("The listening connection ended.")));
    connection.on("notification", (message) => {
      if (!stopped && message.channel === channel && message.payload) onPayload(message.payload);
    });
    try {
      await connection.connect();
      // A connection that only listens must not keep the process alive (one that ends its pool without stopping
      // the worker first): pg's Client keeps its socket as `connection.stream`.
      (connection as { connection?: { stream?: { unref?: () => void } } }).connection?.stream?.unref?.();
      await connection.query(`LISTEN ${quoteIdentifier(channel)}`);
      retryMs = firstRetryMs;
      if (missed && !stopped && held === connection) {
        missed = false;
        options.onResumed?.();
      }
    } catch (error) {
      lost(connection, asError(error));
    }
  };

  void open();
  return () => {
    stopped = true;
    if (timer !== undefined) clearTimeout(timer);
    const connection = held;
    held = undefined;
    if (connection !== undefined) close(connection);
  };
}
