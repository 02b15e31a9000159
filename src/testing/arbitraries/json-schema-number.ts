import fc from "fast-check";
import { ArbitraryDerivationError } from "./derivation-error";

/** The numeric keywords of a JSON Schema (draft 2020-12 §6.2). */
export interface NumericBounds {
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
}

// Without bounds, values stay within ±DEFAULT; with one bound only, the other is 2 × DEFAULT away from it (or at
// ±DEFAULT, whichever is wider), so a schema such as `minimum: 1.6e12` (a time in ms) has a range of its own.
const DEFAULT_DOUBLE = 1e9;
const DEFAULT_MULTIPLE = 1_000_000;

function range(lower: number | undefined, upper: number | undefined, around: number): [number, number] {
  if (lower === undefined && upper === undefined) return [-around, around];
  if (lower === undefined) {
    const derived = Math.min(-around, (upper as number) - 2 * around);
    // Near -Number.MAX_VALUE the subtraction is lost to rounding: then the range reaches the end.
    return [derived < (upper as number) ? derived : -Number.MAX_VALUE, upper as number];
  }
  if (upper === undefined) {
    const derived = Math.max(around, lower + 2 * around);
    return [lower, derived > lower ? derived : Number.MAX_VALUE];
  }
  return [lower, upper];
}

function empty(bounds: NumericBounds, integer: boolean): ArbitraryDerivationError {
  return new ArbitraryDerivationError(
    `no ${integer ? "integer" : "number"}${bounds.multipleOf === undefined ? "" : ` multiple of ${bounds.multipleOf}`} satisfies ${JSON.stringify(bounds)}`,
  );
}

/** Numbers within the bounds (draft 2020-12 §6.2), integers or multiples of `multipleOf` when asked. */
export function numberArbitrary(bounds: NumericBounds, integer: boolean): fc.Arbitrary<number> {
  // The stricter of an inclusive and an exclusive bound on the same side wins (both must hold).
  const lowerOpen =
    bounds.exclusiveMinimum !== undefined &&
    !(bounds.minimum !== undefined && bounds.minimum > bounds.exclusiveMinimum);
  const upperOpen =
    bounds.exclusiveMaximum !== undefined &&
    !(bounds.maximum !== undefined && bounds.maximum < bounds.exclusiveMaximum);
  const lower = lowerOpen ? bounds.exclusiveMinimum : bounds.minimum;
  const upper = upperOpen ? bounds.exclusiveMaximum : bounds.maximum;
  const step = bounds.multipleOf;
  if (integer || step !== undefined) {
    // Multiples of `step` (1 for integers) inside the bounds: k × step for an integer k. An open bound that is
    // itself a multiple is stepped over exactly (adding an epsilon is lost on large bounds).
    const unit = step ?? 1;
    const [low, high] = range(lower, upper, DEFAULT_MULTIPLE);
    let min = Math.ceil(low / unit);
    if (lowerOpen && min * unit <= low) min += 1;
    let max = Math.floor(high / unit);
    if (upperOpen && max * unit >= high) max -= 1;
    min = Math.max(min, Number.MIN_SAFE_INTEGER);
    max = Math.min(max, Number.MAX_SAFE_INTEGER);
    if (min > max) throw empty(bounds, integer);
    return fc.integer({ min, max }).map((k) => k * unit);
  }
  const [min, max] = range(lower, upper, DEFAULT_DOUBLE);
  if (min > max || (min === max && (lowerOpen || upperOpen))) throw empty(bounds, integer);
  return fc.double({
    min,
    max,
    minExcluded: lowerOpen,
    maxExcluded: upperOpen,
    noNaN: true,
    noDefaultInfinity: true,
  });
}
