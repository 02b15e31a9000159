/**
 * Whether `value` is an instance of `Class`, also one made by another copy of this package (its CommonJS build beside
 * the ES module one, or two installed versions), which `instanceof` does not recognise: such a copy's error is
 * known by its `name` and a `code` (and any other field) that `fits` accepts.
 */
export function isErrorOf<E extends Error>(
  value: unknown,
  Class: abstract new (...args: never[]) => E,
  name: string,
  fits: (error: Record<string, unknown>) => boolean,
): value is E {
  return (
    value instanceof Class ||
    (value instanceof Error && value.name === name && fits(value as unknown as Record<string, unknown>))
  );
}
