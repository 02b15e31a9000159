/**
 * What an item of a {@link DueHeap} carries: its key and its place in the heap, both written by the heap. The item
 * holds them itself so that the heap keeps nothing per item but one array slot: no wrapper object and no index
 * map, which were two thirds of the memory a scheduled delivery cost beyond its own record (bench/delivery,
 * "memory").
 */
export interface DueItem {
  /** When the item is due (epoch ms). Written by the heap. */
  due: number;
  /** The caller's tie-break: among items due together, the lower comes first (its arrival, say). `set` records it. */
  seq: number;
  /** Its position in the heap, -1 when in none. Written by the heap; start it at -1. */
  heapIndex: number;
}

/**
 * A binary min-heap of items by due time, then by a tie-break the caller gives (its arrival order). Each item knows
 * its position, so that it can be re-keyed or removed in O(log n). An item is in at most one heap at a time. The
 * one heap of the in-memory delivery queue and inbox. Internal.
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

  /** The earliest due time, if any. */
  peekDue(): number | undefined {
    return this.#items[0]?.due;
  }

  has(item: T): boolean {
    return item.heapIndex >= 0 && this.#items[item.heapIndex] === item;
  }

  /** Inserts `item` due at `due`, or moves it there; `seq` orders items due at the same time (lower first). */
  set(item: T, due: number, seq: number): void {
    if (!this.has(item)) {
      item.due = due;
      item.seq = seq;
      this.#items.push(item);
      this.#up(item, this.#items.length - 1);
      return;
    }
    const earlier = due < item.due || (due === item.due && seq < item.seq);
    item.due = due;
    item.seq = seq;
    if (earlier) this.#up(item, item.heapIndex);
    else this.#down(item, item.heapIndex);
  }

  /** Removes `item` if it is in the heap. */
  delete(item: T): void {
    if (!this.has(item)) return;
    const at = item.heapIndex;
    item.heapIndex = -1;
    const last = this.#items.pop() as T;
    if (last === item) return;
    this.#up(last, at);
    if (last.heapIndex === at) this.#down(last, at);
  }

  #less(a: T, b: T): boolean {
    return a.due < b.due || (a.due === b.due && a.seq < b.seq);
  }

  #place(item: T, index: number): void {
    this.#items[index] = item;
    item.heapIndex = index;
  }

  // Moves `item`, to be placed at `start`, towards the root past every later parent.
  #up(item: T, start: number): void {
    let i = start;
    while (i > 0) {
      const parent = this.#items[(i - 1) >> 1] as T;
      if (!this.#less(item, parent)) break;
      this.#place(parent, i);
      i = (i - 1) >> 1;
    }
    this.#place(item, i);
  }

  // Moves `item`, to be placed at `start`, towards the leaves past every earlier child.
  #down(item: T, start: number): void {
    const size = this.#items.length;
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= size) break;
      const right = left + 1;
      const at = right < size && this.#less(this.#items[right] as T, this.#items[left] as T) ? right : left;
      const child = this.#items[at] as T;
      if (!this.#less(child, item)) break;
      this.#place(child, i);
      i = at;
    }
    this.#place(item, i);
  }
}
