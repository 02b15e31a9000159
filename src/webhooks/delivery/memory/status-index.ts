import type { DeliveryStatus } from "../state-machine";
import { sortedPlace } from "./sorted-place";

/** What the index needs of a delivery: its status now, whether the queue still keeps it, and its creation order. */
export interface StatusIndexed {
  readonly id: string;
  readonly createdAt: number;
  readonly seq: number;
  /** The keys whose list holds it (a bit per key): written by the index. */
  listedIn: number;
}

interface StatusList<T> {
  /** The bit of `StatusIndexed.listedIn` that says an entry is in this list. */
  readonly bit: number;
  /** In creation order. */
  entries: T[];
  /** Entries that came older than the last of `entries` (a replay), in any order: merged in before the next read. */
  late: T[];
  /** How many of `entries` and `late` have the list's status now (the others are stale, removed lazily). */
  live: number;
}

/**
 * One endpoint's deliveries by status, each list in creation order (then publication), so that a listing filtered by
 * status reads its page, not every delivery of the endpoint: a page of `failed` among 1,000,000 `delivered` reads the
 * failed ones. The keys are the statuses, or any other class of deliveries the queue keeps a list of (`K`; at most 31
 * of them, a bit each): the memory queue's `parked`, the exhausted ones parked while their endpoint was disabled.
 * A delivery leaving a status stays in that list, stale, until the stale ones outnumber the live ones (then the list
 * is compacted, O(1) amortised per change); one coming back finds its place still held. One that
 * comes back older than the list's newest (a replay) waits aside until the next read merges them all in one pass: put
 * in its place at once, each cost a shift of the list (a replay of 100,000 moved ~5·10^9 slots).
 */
export class StatusIndex<T extends StatusIndexed, K extends string = DeliveryStatus> {
  readonly #lists = new Map<K, StatusList<T>>();

  constructor(
    private readonly before: (a: T, b: T) => boolean,
    /** Whether `entry` is kept and belongs in the list of `key` (has that status) now. */
    private readonly current: (entry: T, key: K) => boolean,
    /** Stale entries a list may hold beyond as many as its live ones before it is compacted. */
    private readonly slack = 1024,
  ) {}

  /** Records that `entry` moved from `from` (`undefined`: it is new, or joins `to` alone) to `to`. */
  moved(entry: T, from: K | undefined, to: K): void {
    if (from === to) return;
    if (from !== undefined) this.left(from);
    const list = this.#list(to);
    list.live++;
    if ((entry.listedIn & list.bit) !== 0) return;
    entry.listedIn |= list.bit;
    const last = list.entries.at(-1);
    if (last === undefined || this.before(last, entry)) list.entries.push(entry);
    else list.late.push(entry);
  }

  /** Records that a delivery of `key` is no longer kept, or no longer of `key`. */
  left(key: K): void {
    const list = this.#lists.get(key);
    if (list === undefined) return;
    list.live--;
    if (list.entries.length + list.late.length > 2 * list.live + this.slack) this.#compact(key, list);
  }

  /**
   * The entries of any of `statuses` created before `after` (every one without it), newest first, read lazily: a merge
   * of the statuses' lists from their ends, stale entries passed over.
   */
  *newestFirst(statuses: readonly K[], after: T | undefined): Generator<T> {
    const heads: { status: K; entries: T[]; at: number }[] = [];
    for (const status of new Set(statuses)) {
      const list = this.#lists.get(status);
      if (list === undefined) continue;
      const entries = this.#merged(list);
      const at = after === undefined ? entries.length - 1 : sortedPlace(entries, after, this.before) - 1;
      heads.push({ status, entries, at });
    }
    for (;;) {
      let best: (typeof heads)[number] | undefined;
      for (const head of heads) {
        while (head.at >= 0 && !this.current(head.entries[head.at] as T, head.status)) head.at--;
        if (head.at < 0) continue;
        if (best === undefined || this.before(best.entries[best.at] as T, head.entries[head.at] as T)) best = head;
      }
      if (best === undefined) return;
      yield best.entries[best.at--] as T;
    }
  }

  #list(key: K): StatusList<T> {
    let list = this.#lists.get(key);
    if (list === undefined) {
      if (this.#lists.size === 31) throw new RangeError("StatusIndex: at most 31 keys, a bit of listedIn each.");
      list = { bit: 1 << this.#lists.size, entries: [], late: [], live: 0 };
      this.#lists.set(key, list);
    }
    return list;
  }

  /** The list's entries in creation order, the late ones merged in: sorted (k log k), then one merge (n + k). */
  #merged(list: StatusList<T>): T[] {
    const { entries, late } = list;
    if (late.length === 0) return entries;
    late.sort((a, b) => (this.before(a, b) ? -1 : this.before(b, a) ? 1 : 0));
    const merged: T[] = new Array(entries.length + late.length);
    let i = 0;
    let j = 0;
    for (let k = 0; k < merged.length; k++) {
      const next = j === late.length || (i < entries.length && this.before(entries[i] as T, late[j] as T));
      merged[k] = next ? (entries[i++] as T) : (late[j++] as T);
    }
    list.entries = merged;
    list.late = [];
    return merged;
  }

  #compact(key: K, list: StatusList<T>): void {
    const kept: T[] = [];
    for (const entry of this.#merged(list)) {
      if (this.current(entry, key)) kept.push(entry);
      else entry.listedIn &= ~list.bit;
    }
    list.entries = kept;
  }
}
