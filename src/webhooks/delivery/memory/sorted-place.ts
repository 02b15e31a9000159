/**
 * Where `item` is, or goes, in `list` kept sorted by `before`: the first place whose element is not before it
 * (a binary search, so inserts and cursors cost log n in the memory stores' creation-time order).
 */
export function sortedPlace<T>(list: readonly T[], item: T, before: (a: T, b: T) => boolean): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (before(list[middle] as T, item)) low = middle + 1;
    else high = middle;
  }
  return low;
}
