/*
 * The literal segments a matcher state can read next, found in place: the hot path compares
 * characters of the path where they are, and never slices a segment to compare or hash it.
 * Usually the literals are grouped by first character (one array index finds the group), and a
 * literal matches when its characters follow and a "/" (or the end) comes right after it, so a
 * literal segment is read once and its end needs no search. When one first character starts many
 * literals, a hash table keyed by the length and three characters of the segment keeps the work per
 * segment bounded instead.
 */

/** The literals of a state, indexed for a lookup in place. */
export interface SegmentTable {
  /** The literals, sorted by first character. */
  readonly keys: readonly string[];
  /** The literals' characters end to end; key i is `codes[offsets[i], offsets[i + 1])` (a typed array reads faster than a string). */
  readonly codes: Uint16Array;
  readonly offsets: Int32Array;
  /** The smallest first character; `dispatch[2 * (c - base)]` is 1 + the index of the first key starting with c, `[… + 1]` the end of that group. */
  readonly base: number;
  readonly dispatch: Int32Array;
  /** Key indexes + 1 by hash (length a power of two), when some group is too large (then `dispatch` is empty). */
  readonly slots: Int32Array;
}

// A larger group of literals sharing a first character switches the state to the hash table.
const GROUP_LIMIT = 8;
const NONE = new Int32Array(0);
const NO_TEXT = { codes: new Uint16Array(0), offsets: new Int32Array(1) };

/** Builds the table of `keys` (distinct, non-empty). */
export function segmentTable(literals: Iterable<string>): SegmentTable {
  const keys = [...literals].sort((a, b) => a.charCodeAt(0) - b.charCodeAt(0));
  // Most states read only parameters: they share one empty table.
  if (keys.length === 0) return { keys, ...NO_TEXT, base: 0, dispatch: NONE, slots: NONE };
  const offsets = new Int32Array(keys.length + 1);
  keys.forEach((key, i) => {
    offsets[i + 1] = (offsets[i] as number) + key.length;
  });
  const codes = new Uint16Array(offsets[keys.length] as number);
  keys.forEach((key, i) => {
    for (let j = 0; j < key.length; j++) codes[(offsets[i] as number) + j] = key.charCodeAt(j);
  });
  const text = { keys, codes, offsets };
  const base = keys[0]?.charCodeAt(0) as number;
  const dispatch = new Int32Array(2 * ((keys.at(-1)?.charCodeAt(0) as number) - base + 1));
  let large = false;
  keys.forEach((key, index) => {
    const at = 2 * (key.charCodeAt(0) - base);
    if (dispatch[at] === 0) dispatch[at] = index + 1;
    dispatch[at + 1] = index + 1;
    large ||= index + 1 - ((dispatch[at] as number) - 1) > GROUP_LIMIT;
  });
  if (!large) return { ...text, base, dispatch, slots: NONE };
  // At most one slot in four used: probes stay short.
  let size = 4;
  while (size < keys.length * 4) size *= 2;
  const slots = new Int32Array(size);
  const mask = size - 1;
  keys.forEach((key, index) => {
    let slot = hash(key, 0, key.length) & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = index + 1;
  });
  return { ...text, base, dispatch: NONE, slots };
}

/**
 * The index of the key that is the whole segment at `start` (`start < path.length`; the segment ends
 * at the next "/" or at the end of the path), or -1. Finds nothing in a table with hash slots.
 */
export function literalAt(table: SegmentTable, path: string, start: number): number {
  const dispatch = table.dispatch;
  // No literal here (or hashed): the segment's characters are not even read.
  if (dispatch.length === 0) return -1;
  const at = 2 * (path.charCodeAt(start) - table.base);
  if (at < 0 || at >= dispatch.length) return -1;
  const first = dispatch[at] as number;
  if (first === 0) return -1;
  const end = dispatch[at + 1] as number;
  const { codes, offsets } = table;
  const length = path.length;
  for (let index = first - 1; index < end; index++) {
    const from = offsets[index] as number;
    const size = (offsets[index + 1] as number) - from;
    const stop = start + size;
    if (stop > length || (stop < length && path.charCodeAt(stop) !== 47) /* "/" */) continue;
    let i = 1;
    while (i < size && codes[from + i] === path.charCodeAt(start + i)) i++;
    if (i === size) return index;
  }
  return -1;
}

/** The length of key `index`. */
export function keyLength(table: SegmentTable, index: number): number {
  return (table.offsets[index + 1] as number) - (table.offsets[index] as number);
}

/** With hash slots: the index of the key equal to the segment `path[start, end)` (non-empty), or -1. */
export function hashedAt(table: SegmentTable, path: string, start: number, end: number): number {
  const slots = table.slots;
  const mask = slots.length - 1;
  const size = end - start;
  let slot = hash(path, start, end) & mask;
  for (;;) {
    const candidate = slots[slot] as number;
    if (candidate === 0) return -1;
    const key = table.keys[candidate - 1] as string;
    if (key.length === size && path.startsWith(key, start)) return candidate - 1;
    slot = (slot + 1) & mask;
  }
}

// Small integers throughout (no overflow to doubles): length, first, middle and last character.
function hash(text: string, start: number, end: number): number {
  const size = end - start;
  return (
    ((size * 31 + text.charCodeAt(start)) * 31 + text.charCodeAt(start + (size >> 1))) * 31 + text.charCodeAt(end - 1)
  );
}
