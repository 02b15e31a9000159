interface Entry<T> {
  readonly item: T;
  due: number;
  /** The caller's tie-break: among equal due times, the lower comes first (its arrival, say). */
  seq: number;
  index: number;
}

/**
 * A binary min-heap of items by due time, then by a tie-break the caller gives (its arrival order), with each
 * item's position kept so that it can be re-keyed or removed in O(log n): the one heap of the in-memory delivery
 * queue and inbox. Internal.
 */
export class DueHeap<T> {
  readonly #entries: Entry<T>[] = [];
  readonly #where = new Map<T, Entry<T>>();

  get size(): number {
    return this.#entries.length;
  }

  /** The item due first, if any. */
  peek(): T | undefined {
    return this.#entries[0]?.item;
  }

  /** The earliest due time, if any. */
  peekDue(): number | undefined {
    return this.#entries[0]?.due;
  }

  has(item: T): boolean {
    return this.#where.has(item);
  }

  /** Inserts `item` due at `due`, or moves it there; `seq` orders items due at the same time (lower first). */
  set(item: T, due: number, seq: number): void {
    const entry = this.#where.get(item);
    if (entry === undefined) {
      const added: Entry<T> = { item, due, seq, index: this.#entries.length };
      this.#entries.push(added);
      this.#where.set(item, added);
      this.#up(added.index);
      return;
    }
    const earlier = due < entry.due || (due === entry.due && seq < entry.seq);
    entry.due = due;
    entry.seq = seq;
    if (earlier) this.#up(entry.index);
    else this.#down(entry.index);
  }

  /** Removes `item` if it is in the heap. */
  delete(item: T): void {
    const entry = this.#where.get(item);
    if (entry === undefined) return;
    this.#where.delete(item);
    const last = this.#entries.pop() as Entry<T>;
    if (last === entry) return;
    this.#place(last, entry.index);
    this.#up(last.index);
    this.#down(last.index);
  }

  #less(a: Entry<T>, b: Entry<T>): boolean {
    return a.due < b.due || (a.due === b.due && a.seq < b.seq);
  }

  #place(entry: Entry<T>, index: number): void {
    this.#entries[index] = entry;
    entry.index = index;
  }

  #up(start: number): void {
    const entry = this.#entries[start] as Entry<T>;
    let i = start;
    while (i > 0) {
      const parent = this.#entries[(i - 1) >> 1] as Entry<T>;
      if (!this.#less(entry, parent)) break;
      this.#place(parent, i);
      i = (i - 1) >> 1;
    }
    this.#place(entry, i);
  }

  #down(start: number): void {
    const entry = this.#entries[start] as Entry<T>;
    const size = this.#entries.length;
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= size) break;
      const right = left + 1;
      const at =
        right < size && this.#less(this.#entries[right] as Entry<T>, this.#entries[left] as Entry<T>) ? right : left;
      const child = this.#entries[at] as Entry<T>;
      if (!this.#less(child, entry)) break;
      this.#place(child, i);
      i = at;
    }
    this.#place(entry, i);
  }
}
