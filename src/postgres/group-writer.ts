/**
 * Group commit (the webhook inbox's adds, the delivery queue's outcomes): items that arrive while earlier writes are
 * in flight are written together in one statement (one round trip, one WAL flush), which is what bounds durable
 * writes per second. Each caller still learns its own outcome; a failed batch is retried item
 * by item so one row the database refuses cannot fail its neighbours.
 */
import { StoreClosedError } from "./store-closed-error";

interface Pending<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

export class GroupWriter<T, R> {
  readonly #write: (items: T[]) => Promise<R[]>;
  readonly #maxBatch: number;
  readonly #maxInFlight: number;
  #queue: Pending<T, R>[] = [];
  #inFlight = 0;
  /** Set by `close()`: resolves it once nothing is queued or in flight. */
  #closed: { promise: Promise<void>; resolve: () => void } | undefined;

  readonly #perItem: (error: unknown) => boolean;
  readonly #rewrite: (item: T, error: unknown) => T | undefined;

  /**
   * @param write writes a batch and returns one result per item, in order
   * @param maxInFlight concurrent batch statements; further items wait and join the next batch
   * @param perItem whether a batch failing with `error` is worth retrying item by item (a data error,
   *   not a lost connection, which would only fail again once per item)
   * @param rewrite the item in a second form to write once when its own write failed with `error` (its caller gets
   *   that write's outcome), or `undefined` to fail it; written here, so `close()` waits for it
   */
  constructor(
    write: (items: T[]) => Promise<R[]>,
    maxBatch: number,
    maxInFlight: number,
    perItem: (error: unknown) => boolean = () => true,
    rewrite: (item: T, error: unknown) => T | undefined = () => undefined,
  ) {
    this.#write = write;
    this.#perItem = perItem;
    this.#rewrite = rewrite;
    this.#maxBatch = maxBatch;
    this.#maxInFlight = maxInFlight;
  }

  /** Writes `item` with what else is queued; rejects with {@link StoreClosedError} once `close()` began. */
  submit(item: T): Promise<R> {
    if (this.#closed !== undefined) return Promise.reject(new StoreClosedError());
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      this.#pump();
    });
  }

  /**
   * Stops taking writes and resolves once every write submitted before has settled: queued ones are still written,
   * in batches as before, each caller learning its own outcome (a failed write rejects its caller, not `close`).
   * Later `submit` calls reject with {@link StoreClosedError}. Every call returns the same promise.
   */
  close(): Promise<void> {
    if (this.#closed === undefined) {
      let resolve!: () => void;
      const promise = new Promise<void>((done) => (resolve = done));
      this.#closed = { promise, resolve };
      this.#settleClose();
    }
    return this.#closed.promise;
  }

  #settleClose(): void {
    if (this.#closed !== undefined && this.#inFlight === 0 && this.#queue.length === 0) this.#closed.resolve();
  }

  #pump(): void {
    while (this.#inFlight < this.#maxInFlight && this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#maxBatch);
      this.#inFlight++;
      this.#flush(batch).finally(() => {
        this.#inFlight--;
        this.#pump();
        this.#settleClose();
      });
    }
  }

  async #flush(batch: Pending<T, R>[]): Promise<void> {
    try {
      const results = await this.#write(batch.map((entry) => entry.item));
      for (const [i, entry] of batch.entries()) entry.resolve(results[i] as R);
    } catch (error) {
      if (batch.length === 1) return this.#again(batch[0] as Pending<T, R>, error);
      if (!this.#perItem(error)) {
        for (const entry of batch) entry.reject(error);
        return;
      }
      // In order, so that of two adds of one id the first still wins.
      for (const entry of batch) {
        try {
          entry.resolve((await this.#write([entry.item]))[0] as R);
        } catch (single) {
          await this.#again(entry, single);
        }
      }
    }
  }

  /** After `entry`'s own write failed with `error`: its second form written once, if it has one, else the error. */
  async #again(entry: Pending<T, R>, error: unknown): Promise<void> {
    const second = this.#rewrite(entry.item, error);
    if (second === undefined) return entry.reject(error);
    try {
      entry.resolve((await this.#write([second]))[0] as R);
    } catch (failed) {
      entry.reject(failed);
    }
  }
}
