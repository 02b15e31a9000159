/** What the heap orders: by due time, then by `seq` (arrival order) among equal times. */
export interface DueItem {
  /** Unix ms; only items with a number are ever in the heap. */
  availableAt: number | undefined;
  /** Tie-breaker: lower first. */
  seq: number;
  /** Position in the heap, -1 when not in it. Owned by the heap. */
  heapIndex: number;
}

/**
 * A binary min-heap of items by (due time, seq), each item knowing its own position so it can be
 * removed or re-keyed in O(log n). Internal to the memory inbox.
 */
export class DueHeap<T extends DueItem> {
  readonly #items: T[] = [];

  get size(): number {
    return this.#items.length;
  }

  /** The item due first, if any. */
  peek(): T | undefined {
    return this.#items[0];
  }

  /** Inserts `item`, or moves it after its due time changed. */
  set(item: T): void {
    if (item.heapIndex >= 0) {
      this.#up(item.heapIndex);
      this.#down(item.heapIndex);
      return;
    }
    item.heapIndex = this.#items.length;
    this.#items.push(item);
    this.#up(item.heapIndex);
  }

  /** Removes `item` if it is in the heap. */
  delete(item: T): void {
    const at = item.heapIndex;
    if (at < 0) return;
    item.heapIndex = -1;
    const last = this.#items.pop() as T;
    if (last === item) return;
    this.#items[at] = last;
    last.heapIndex = at;
    this.#up(at);
    this.#down(last.heapIndex);
  }

  #less(a: T, b: T): boolean {
    const da = a.availableAt ?? 0;
    const db = b.availableAt ?? 0;
    return da < db || (da === db && a.seq < b.seq);
  }

  #place(item: T, at: number): void {
    this.#items[at] = item;
    item.heapIndex = at;
  }

  #up(index: number): void {
    const items = this.#items;
    const item = items[index] as T;
    let i = index;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const above = items[parent] as T;
      if (!this.#less(item, above)) break;
      this.#place(above, i);
      i = parent;
    }
    this.#place(item, i);
  }

  #down(index: number): void {
    const items = this.#items;
    const n = items.length;
    const item = items[index] as T;
    let i = index;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      let child = left;
      if (right < n && this.#less(items[right] as T, items[left] as T)) child = right;
      const below = items[child] as T;
      if (!this.#less(below, item)) break;
      this.#place(below, i);
      i = child;
    }
    this.#place(item, i);
  }
}
