import { z } from "zod";

// Unix seconds up to 11 digits (year 5138), so the milliseconds stay exact and every store can keep them.
const UNIX_SECONDS = /^\d{1,11}$/;
const MAX_SECONDS = 99_999_999_999;

const isoDateTime = z.iso.datetime({ offset: true });

// RFC 3339 §5.6 date-time, whose "T" and "Z" may be "t" and "z" (§5.6 NOTE): read in upper case, the spelling zod's
// check takes; Date.parse then gives its instant, and the year range keeps it storable. Documented as `format:
// date-time`, which is RFC 3339's (JSON Schema 2020-12 validation §7.3.1), where zod's own pattern wants upper case.
const dateTime = z
  .string()
  .meta({ format: "date-time" })
  .transform((text, ctx) => {
    const value = text.toUpperCase();
    if (!isoDateTime.safeParse(value).success) {
      ctx.addIssue({ code: "invalid_format", format: "datetime", message: "Expected an RFC 3339 date-time." });
      return z.NEVER;
    }
    const ms = Date.parse(value);
    if (!Number.isFinite(ms) || ms < 0) {
      ctx.addIssue({ code: "custom", message: "Expected a date-time after 1970-01-01T00:00:00Z." });
      return z.NEVER;
    }
    return ms;
  });

const seconds = z
  .string()
  .regex(UNIX_SECONDS, "Expected Unix seconds or an RFC 3339 date-time.")
  .transform((value) => Number(value) * 1000);

/** `since` in a query: Unix seconds or an RFC 3339 date-time, as epoch ms; anything else is a 400. */
export const sinceQuerySchema = z.union([seconds, dateTime]).optional();

/** `since` in a body: the query's forms, or Unix seconds as a JSON number. */
export const sinceBodySchema = z
  .union([
    z
      .number()
      .int()
      .min(0)
      .max(MAX_SECONDS)
      .transform((value) => value * 1000),
    seconds,
    dateTime,
  ])
  .optional();
