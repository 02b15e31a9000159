import type { z } from "zod";

/**
 * Decodes one row with its zod schema: the one way every store reads rows. A row the schema refuses (written by
 * an incompatible version, or by hand) becomes the store's own error, with the zod error as its cause.
 */
export function decodeRow<S extends z.ZodType>(
  schema: S,
  row: unknown,
  invalid: (cause: unknown) => Error,
): z.output<S> {
  const parsed = schema.safeParse(row);
  if (!parsed.success) throw invalid(parsed.error);
  return parsed.data;
}
