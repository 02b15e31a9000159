import { createHash } from "node:crypto";

/** The default table name. */
export const DEFAULT_TABLE = "idempotency_keys";

// An unquoted SQL identifier, optionally schema-qualified; PostgreSQL keeps 63 bytes of a name.
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** A validated, quoted table name and a short tag for prepared statement names. */
export interface TableName {
  readonly sql: string;
  readonly bare: string;
  readonly tag: string;
}

/** Validates `name` (`table` or `schema.table`, unquoted identifiers) and quotes it for SQL. */
export function tableName(name: string): TableName {
  const parts = name.split(".");
  if (parts.length > 2 || !parts.every((part) => IDENTIFIER.test(part))) {
    throw new TypeError(
      `idempotency: table must be "name" or "schema.name" of [A-Za-z0-9_], got ${JSON.stringify(name)}`,
    );
  }
  return {
    sql: parts.map((part) => `"${part}"`).join("."),
    bare: parts[parts.length - 1] as string,
    tag: createHash("sha1").update(name).digest("hex").slice(0, 12),
  };
}
