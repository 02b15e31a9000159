import { z } from "zod";

// An optional minus and decimal digits without a leading zero ("-0" is not one): one spelling per integer.
const DECIMAL = /^(?:0|-?[1-9][0-9]{0,15})$/;

// The number the text spells, or the text itself (for `schema` to refuse) when it is not a safe integer's only
// spelling: 16 digits reach past 2^53, where Number would round 9007199254740993 to a neighbour.
function integerOf(value: unknown): unknown {
  if (typeof value !== "string" || !DECIMAL.test(value)) return value;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : value;
}

/**
 * A query parameter holding an integer written in plain decimal digits, with a `-` for a negative one, for a route's
 * `query` schema: `schema` gets the number when the text is such an integer within the safe range (what `z.int()`
 * documents), else the text itself, which it refuses (the router's 400 `validation_failed`, pointing at the
 * parameter). `z.coerce.number()` would also take `0x10`, `1e1`, `+10`, ` 10 `, `10.0`, `010`, `-0` and an empty
 * value (as 0), so one resource would answer many URLs. Preprocessed rather than piped from a string schema, so
 * OpenAPI shows what a client sends: an integer, with `schema`'s bounds and default; every integer those allow is
 * taken.
 * @param schema a number schema (`z.int()` and its bounds); a default or `.optional()` goes on it, not on the result
 *   (zod's JSON Schema leaves out a default put on a preprocess).
 * @example z.object({ limit: queryInteger(z.int().min(1).max(100).default(20)) })
 */
export function queryInteger<T extends z.ZodType>(schema: T) {
  return z.preprocess(integerOf, schema);
}
