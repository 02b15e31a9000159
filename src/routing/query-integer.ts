import { z } from "zod";

// Plain decimal digits: no sign, no leading zero, at most 15 digits, so every value is a safe integer.
const DECIMAL = /^(?:0|[1-9][0-9]{0,14})$/;

/**
 * A query parameter holding an integer written in plain decimal digits, for a route's `query` schema: `schema` gets
 * the number when the text is such digits, else the text itself, which it refuses (the router's 400
 * `validation_failed`, pointing at the parameter). `z.coerce.number()` would also take `0x10`, `1e1`, `+10`, ` 10 `,
 * `10.0`, `010` and an empty value (as 0), so one resource would answer many URLs. Preprocessed rather than piped
 * from a string schema, so OpenAPI shows what a client sends: an integer, with `schema`'s bounds and default.
 * @param schema a number schema (`z.int()` and its bounds); a default or `.optional()` goes on it, not on the result
 *   (zod's JSON Schema leaves out a default put on a preprocess).
 * @example z.object({ limit: queryInteger(z.int().min(1).max(100).default(20)) })
 */
export function queryInteger<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => (typeof value === "string" && DECIMAL.test(value) ? Number(value) : value), schema);
}
