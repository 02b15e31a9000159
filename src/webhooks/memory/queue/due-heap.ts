/**
 * A binary min-heap of slot numbers keyed by due time, with positions so a key can change in O(log n).
 * Parallel typed arrays keep it at 16 bytes per entry and out of the garbage collector's way. Internal.
 */
export class DueHeap {
  #heap = new Int32Array(1024);
  #pos = new Int32Array(1024).fill(-1);
  #due = new Float64Array(1024);
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** The smallest due time, if any. */
  peekDue(): number | undefined {
    return this.#size === 0 ? undefined : this.#due[this.#heap[0] as number];
  }

  /** The slot with the smallest due time, if any. */
  peekSlot(): number | undefined {
    return this.#size === 0 ? undefined : this.#heap[0];
  }

  has(slot: number): boolean {
    return slot < this.#pos.length && (this.#pos[slot] as number) >= 0;
  }

  /** Inserts `slot` or moves it to its new due time. */
  set(slot: number, due: number): void {
    this.#ensure(slot);
    const at = this.#pos[slot] as number;
    if (at < 0) {
      if (this.#size === this.#heap.length) this.#heap = grow(this.#heap, this.#heap.length * 2, 0);
      this.#due[slot] = due;
      this.#heap[this.#size] = slot;
      this.#pos[slot] = this.#size;
      this.#size++;
      this.#up(this.#size - 1);
      return;
    }
    const before = this.#due[slot] as number;
    this.#due[slot] = due;
    if (due < before) this.#up(at);
    else this.#down(at);
  }

  delete(slot: number): void {
    if (!this.has(slot)) return;
    const at = this.#pos[slot] as number;
    const last = this.#heap[--this.#size] as number;
    this.#pos[slot] = -1;
    if (last === slot) return;
    this.#heap[at] = last;
    this.#pos[last] = at;
    this.#up(at);
    this.#down(this.#pos[last] as number);
  }

  #ensure(slot: number): void {
    if (slot < this.#pos.length) return;
    let capacity = this.#pos.length;
    while (capacity <= slot) capacity *= 2;
    this.#pos = grow(this.#pos, capacity, -1);
    const due = new Float64Array(capacity);
    due.set(this.#due);
    this.#due = due;
  }

  #less(a: number, b: number): boolean {
    return (this.#due[this.#heap[a] as number] as number) < (this.#due[this.#heap[b] as number] as number);
  }

  #swap(a: number, b: number): void {
    const sa = this.#heap[a] as number;
    const sb = this.#heap[b] as number;
    this.#heap[a] = sb;
    this.#heap[b] = sa;
    this.#pos[sb] = a;
    this.#pos[sa] = b;
  }

  #up(index: number): void {
    let i = index;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(i, parent)) return;
      this.#swap(i, parent);
      i = parent;
    }
  }

  #down(index: number): void {
    let i = index;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= this.#size) return;
      const right = left + 1;
      const child = right < this.#size && this.#less(right, left) ? right : left;
      if (!this.#less(child, i)) return;
      this.#swap(i, child);
      i = child;
    }
  }
}

function grow(array: Int32Array, capacity: number, fill: number): Int32Array<ArrayBuffer> {
  const out = new Int32Array(capacity);
  if (fill !== 0) out.fill(fill);
  out.set(array);
  return out;
}
