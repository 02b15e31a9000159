// Lower-case unquoted SQL identifiers only: they are interpolated into statements, and PostgreSQL keeps 63 bytes.
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** The schema every store uses unless told otherwise. */
export const DEFAULT_SCHEMA = "public";

/**
 * Validates a schema name and returns it; anything but a lower-case SQL identifier is a TypeError (it is
 * interpolated into SQL), and so is a `pg_` name, which PostgreSQL reserves for system schemas (it would refuse
 * it only when the migration runs).
 */
export function schemaName(schema: string | undefined, what: string): string {
  const name = schema ?? DEFAULT_SCHEMA;
  if (typeof name !== "string" || !IDENTIFIER.test(name)) {
    throw new TypeError(
      `${what}: schema must be a lower-case SQL identifier ([a-z_][a-z0-9_]*, at most 63 characters), got ${JSON.stringify(name)}.`,
    );
  }
  // PostgreSQL, CREATE SCHEMA: "The name cannot begin with pg_, as such names are reserved for system schemas."
  if (name.startsWith("pg_")) {
    throw new TypeError(
      `${what}: schema ${JSON.stringify(name)} begins with pg_, which PostgreSQL reserves for system schemas.`,
    );
  }
  return name;
}

/** `"schema"."table"`: the one way every store names its tables. */
export function tableIn(schema: string, table: string): string {
  return `"${schema}"."${table}"`;
}
