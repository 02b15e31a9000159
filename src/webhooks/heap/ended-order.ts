/** What an item of an {@link EndedOrder} carries: when it ended and its neighbours in the list, written by the list. */
export interface EndedLink<T> {
  endedAt: number;
  older: T | undefined;
  newer: T | undefined;
}

/**
 * Items in the order they ended (the memory queue's terminal deliveries, the memory inbox's done events), oldest
 * first: a list threaded through the items themselves, so that forgetting the oldest, taking one out and moving one
 * to the back are each O(1). A `Map`'s insertion order
 * gives the same order, but V8 keeps a deleted entry as a hole until it rebuilds the table, so reaching the oldest
 * entry of a `Map` that keeps churning walks every hole first: past 100,000 kept deliveries each delivery cost the
 * in-memory queue 5–10 times as much. An item is in at most one list. Internal.
 */
export class EndedOrder<T extends EndedLink<T>> {
  #oldest: T | undefined;
  #newest: T | undefined;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** The item that ended first, if any. */
  get oldest(): T | undefined {
    return this.#oldest;
  }

  has(item: T): boolean {
    // A listed item other than the oldest has an older neighbour.
    return item === this.#oldest || item.older !== undefined;
  }

  /** Puts `item` last, as ended at `at` (moving it there if it is listed already). */
  push(item: T, at: number): void {
    this.delete(item);
    item.endedAt = at;
    item.older = this.#newest;
    item.newer = undefined;
    if (this.#newest === undefined) this.#oldest = item;
    else this.#newest.newer = item;
    this.#newest = item;
    this.#size++;
  }

  /**
   * Dates `at` every item dated after it: when the clock stepped back, the items dated ahead ended before anything
   * ending now, so, on the clock as it reads, no later than `at`. The list then stays in `endedAt` order, which a
   * retention that stops at the first item not yet expired relies on. From the newest: O(1) while time goes forward.
   */
  endedNoLaterThan(at: number): void {
    for (let item = this.#newest; item !== undefined && item.endedAt > at; item = item.older) item.endedAt = at;
  }

  /** Takes `item` out if it is listed. */
  delete(item: T): void {
    if (!this.has(item)) return;
    const { older, newer } = item;
    if (older === undefined) this.#oldest = newer;
    else older.newer = newer;
    if (newer === undefined) this.#newest = older;
    else newer.older = older;
    item.older = undefined;
    item.newer = undefined;
    this.#size--;
  }
}
