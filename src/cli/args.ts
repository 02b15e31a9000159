import { type ParseArgsConfig, parseArgs } from "node:util";
import { UsageError } from "./output";

/** The options of a command, in `node:util` `parseArgs` form. */
export type OptionSpec = NonNullable<ParseArgsConfig["options"]>;

/** Options every command takes. */
export const COMMON_OPTIONS = {
  help: { type: "boolean", short: "h" },
  json: { type: "boolean" },
} as const satisfies OptionSpec;

/**
 * Parses a command's arguments strictly: an unknown option or a missing value is a {@link UsageError} (exit 2)
 * instead of node's own `TypeError`.
 */
export function parseCommand<O extends OptionSpec>(argv: readonly string[], options: O) {
  try {
    return parseArgs({
      args: [...argv],
      options: { ...COMMON_OPTIONS, ...options },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** A whole number option, at least `min`. */
export function integerOption(value: string | undefined, name: string, fallback: number, min = 0): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min)
    throw new UsageError(`--${name} must be a whole number ≥ ${min}, got "${value}"`);
  return Number(value);
}

// RFC 9110 §5.1: field-name = token.
const FIELD_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** `--header "name: value"` options as a record (names lower-cased); a name that is no token is a UsageError. */
export function headerOptions(values: readonly string[] | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const value of values ?? []) {
    const colon = value.indexOf(":");
    const name = value.slice(0, Math.max(colon, 0)).trim();
    if (colon <= 0 || !FIELD_NAME.test(name)) throw new UsageError(`--header must be "name: value", got "${value}"`);
    headers[name.toLowerCase()] = value.slice(colon + 1).trim();
  }
  return headers;
}
