import { isDeepStrictEqual } from "node:util";

/** Structural equality of JSON-like values. */
export function same(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(a, b);
}
