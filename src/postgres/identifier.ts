import { utf8Length } from "../http/utf8-length";

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
  return `${quoteIdentifier(schema)}.${quoteIdentifier(table)}`;
}

/** A name as a quoted identifier: PostgreSQL 4.1.1, "to include a double quote, write two double quotes". */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

// NAMEDATALEN - 1: PostgreSQL cuts a longer identifier to its first 63 bytes (a NOTICE, not an error).
const MAX_IDENTIFIER_BYTES = 63;

/**
 * Checks a name given as data (a migration's schema, which `migrate` accepts as any quoted identifier) and returns
 * it; a TypeError for what PostgreSQL would not keep as given: not a string, empty or holding a NUL (4.1.1: "a
 * quoted identifier cannot contain the character with code zero"), or over 63 bytes, which PostgreSQL cuts short,
 * so that two long names sharing their first 63 bytes would be one schema.
 */
export function identifierName(name: unknown, what: string): string {
  if (typeof name !== "string" || name === "" || name.includes("\u0000")) {
    throw new TypeError(`${what}: expected a non-empty SQL identifier without NUL, got ${JSON.stringify(name)}.`);
  }
  const bytes = utf8Length(name);
  if (bytes > MAX_IDENTIFIER_BYTES) {
    throw new TypeError(
      `${what}: ${JSON.stringify(name)} is ${bytes} bytes, and PostgreSQL keeps only the first ${MAX_IDENTIFIER_BYTES} of an identifier.`,
    );
  }
  return name;
}
