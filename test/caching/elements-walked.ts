/**
 * Counts work without a clock: the array and Set elements a function walks through (includes / indexOf scans,
 * and every iteration: for...of, spread, `new Set(array)`). A parser that is linear in its input walks a number
 * of elements proportional to it; one that searches an array, or copies a Set, per name walks the square.
 */
type Method = (this: unknown, ...args: unknown[]) => unknown;

export function elementsWalked(run: () => unknown): number {
  let walked = 0;
  const restore: (() => void)[] = [];
  const count = (target: object, key: PropertyKey, size: (self: never) => number) => {
    const holder = target as Record<PropertyKey, Method>;
    const original = holder[key] as Method;
    holder[key] = function (this: unknown, ...args: unknown[]) {
      walked += size(this as never);
      return original.apply(this, args);
    };
    restore.push(() => {
      holder[key] = original;
    });
  };
  const length = (array: unknown[]) => array.length;
  for (const key of ["includes", "indexOf", "lastIndexOf", Symbol.iterator]) count(Array.prototype, key, length);
  count(Set.prototype, Symbol.iterator, (set: Set<unknown>) => set.size);
  try {
    run();
  } finally {
    for (const undo of restore.reverse()) undo();
  }
  return walked;
}
