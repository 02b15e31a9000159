/** Structural equality of JSON-like values (what `JSON.parse` returns, plus `{ status, body }` wrappers). */
export function same(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => same(item, b[i]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  return keys.every((key) => Object.hasOwn(right, key) && same(left[key], right[key]));
}

/**
 * Whether two lists hold the same members as many times each, in any order (a multiset comparison with
 * {@link same}): a collection listed in another order holds the same resources.
 */
export function sameMembers(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  const unmatched = [...b];
  for (const item of a) {
    const at = unmatched.findIndex((other) => same(item, other));
    if (at === -1) return false;
    unmatched.splice(at, 1);
  }
  return true;
}
