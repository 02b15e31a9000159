import { quoteIdentifier } from "../../../postgres/identifier";

/** A `pg` client of its own, as the pool makes them (`new pool.Client(pool.options)`): its events, and `end`. */
export interface PgListener {
  connect(): Promise<unknown>;
  query(text: string): Promise<unknown>;
  end(): Promise<unknown>;
  on(event: "notification", listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: "error" | "end", listener: (error?: Error) => void): unknown;
}

/** One listen on one channel: what it is told. Internal. */
export interface ChannelSubscription {
  readonly channel: string;
  readonly onPayload: (payload: string) => void;
  readonly onError?: ((error: Error) => void) | undefined;
  readonly onResumed?: (() => void) | undefined;
  readonly retryMs?: number | undefined;
}

const MAX_RETRY_MS = 30_000;
const FIRST_RETRY_MS = 1_000;

/** What a listen is told of a failure: the error, or one made of what was thrown. Internal. */
export const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

/** Tells `onError` of `error`; one that throws changes nothing (the listen connects again all the same). Internal. */
export function tellError(onError: ((error: Error) => void) | undefined, error: Error): void {
  try {
    onError?.(error);
  } catch {
    // One listen's throw does not keep the others from being told.
  }
}

// What keeps a connection that only listens from keeping the process alive (one that ends its pool without stopping
// the worker first): pg's Client keeps its socket as `connection.stream`.
function unref(connection: PgListener): void {
  (connection as { connection?: { stream?: { unref?: () => void } } }).connection?.stream?.unref?.();
}

/**
 * The listening connection of one `pg` Pool, shared by every listen on it (the endpoint store's and the delivery
 * queue's of a worker process, any number of store objects): one connection of its own, opened with the pool's
 * settings outside the pool, `LISTEN`ing on the channels someone listens on, closed with the last listen. A lost
 * connection is reported to every listen and opened again after the shortest `retryMs` among them (doubling, at
 * most 30 s); then each listen that saw the loss is told it resumed. Internal.
 */
export class SharedPgListener {
  readonly #newClient: () => PgListener;
  readonly #onEmpty: () => void;
  readonly #subscriptions = new Set<ChannelSubscription>();
  // Listens that saw a loss and have not heard since.
  readonly #missed = new Set<ChannelSubscription>();
  // The channels LISTENed on (or being) on the current connection, once it is ready.
  readonly #channels = new Set<string>();
  #held: PgListener | undefined;
  #ready = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #retryMs: number | undefined;

  constructor(newClient: () => PgListener, onEmpty: () => void) {
    this.#newClient = newClient;
    this.#onEmpty = onEmpty;
  }

  /** Listens for `subscription` until the returned function is called. */
  add(subscription: ChannelSubscription): () => void {
    this.#subscriptions.add(subscription);
    if (this.#held === undefined && this.#timer === undefined) void this.#open();
    else if (this.#ready) this.#listen(subscription.channel);
    return () => this.#remove(subscription);
  }

  #remove(subscription: ChannelSubscription): void {
    if (!this.#subscriptions.delete(subscription)) return;
    this.#missed.delete(subscription);
    if (this.#subscriptions.size === 0) {
      if (this.#timer !== undefined) clearTimeout(this.#timer);
      this.#timer = undefined;
      const connection = this.#held;
      this.#drop();
      if (connection !== undefined) connection.end().catch(() => {});
      this.#onEmpty();
      return;
    }
    if (this.#ready) this.#unlistenIfLeft(subscription.channel);
  }

  #unlistenIfLeft(channel: string): void {
    if (!this.#channels.has(channel) || this.#listened(channel)) return;
    this.#channels.delete(channel);
    // A failure here is the connection's: its 'error' event tells.
    this.#held?.query(`UNLISTEN ${quoteIdentifier(channel)}`).catch(() => {});
  }

  #listened(channel: string): boolean {
    for (const subscription of this.#subscriptions) if (subscription.channel === channel) return true;
    return false;
  }

  #listen(channel: string): void {
    if (this.#channels.has(channel)) return;
    this.#channels.add(channel);
    this.#held?.query(`LISTEN ${quoteIdentifier(channel)}`).catch(() => {});
  }

  #drop(): void {
    this.#held = undefined;
    this.#ready = false;
    this.#channels.clear();
  }

  #lost(connection: PgListener, error: Error): void {
    if (this.#held !== connection) return;
    this.#drop();
    connection.end().catch(() => {});
    if (this.#subscriptions.size === 0) return;
    const retryMs = this.#retryMs ?? Math.min(...[...this.#subscriptions].map((s) => s.retryMs ?? FIRST_RETRY_MS));
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#open();
    }, retryMs);
    // A listener waiting to connect again must not keep the process alive: the worker stops it when it stops.
    this.#timer.unref?.();
    this.#retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
    for (const subscription of [...this.#subscriptions]) {
      this.#missed.add(subscription);
      tellError(subscription.onError, error);
    }
  }

  async #open(): Promise<void> {
    const connection = this.#newClient();
    this.#held = connection;
    // Attached before anything runs on it: an 'error' event without a listener would end the process.
    connection.on("error", (error) => this.#lost(connection, asError(error ?? new Error("connection lost"))));
    connection.on("end", () => this.#lost(connection, new Error("The listening connection ended.")));
    connection.on("notification", (message) => {
      if (this.#held !== connection || !message.payload) return;
      for (const subscription of [...this.#subscriptions]) {
        if (subscription.channel !== message.channel) continue;
        try {
          subscription.onPayload(message.payload);
        } catch {
          // Thrown from a connection's event, it would end the process; the other listens are still told.
        }
      }
    });
    try {
      await connection.connect();
      unref(connection);
      if (this.#held !== connection) return;
      // Every channel listened on by now, in one statement; later ones as they come (add).
      const channels = new Set([...this.#subscriptions].map((s) => s.channel));
      await connection.query([...channels].map((channel) => `LISTEN ${quoteIdentifier(channel)}`).join("; "));
      if (this.#held !== connection) return;
      for (const channel of channels) this.#channels.add(channel);
      this.#ready = true;
      this.#retryMs = undefined;
      // Listens that came or went while it connected: their channels joined, or left with the last of them.
      for (const subscription of this.#subscriptions) this.#listen(subscription.channel);
      for (const channel of channels) this.#unlistenIfLeft(channel);
      for (const subscription of [...this.#missed]) {
        this.#missed.delete(subscription);
        try {
          subscription.onResumed?.();
        } catch {
          // As for a payload: the others are still told.
        }
      }
    } catch (error) {
      this.#lost(connection, asError(error));
    }
  }
}
