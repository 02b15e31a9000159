/**
 * What {@link MigrationError} reports, by the step of `migrate` that stopped:
 * - `migration_failed`: a migration's statement failed (`migration`, `statement` say which);
 * - `migration_schema_failed`: creating the schema failed (`CREATE SCHEMA IF NOT EXISTS`: no CREATE privilege on the
 *   database, a read-only transaction or a standby);
 * - `migration_history_failed`: creating or reading the schema's `rest_webhooks_migrations` table failed (no privilege
 *   on the schema, a table of that name that is not ours);
 * - `migration_unknown_applied`: the schema records a later version of a store than this code knows (`unknown`, such
 *   as `delivery@13` where it knows up to `delivery@12`), applied by a newer release; nothing is applied unless
 *   `migrate` is given `allowUnknown: true`.
 */
export type MigrationErrorCode =
  | "migration_failed"
  | "migration_schema_failed"
  | "migration_history_failed"
  | "migration_unknown_applied";

/** The details of a {@link MigrationError} beside its code. */
export interface MigrationErrorDetails {
  /** The schema the step worked in. */
  readonly schema: string;
  /** The migration whose statement failed (`delivery@3`); with `migration_failed` only. */
  readonly migration?: string;
  /** Which of its statements failed, from 1; with `migration_failed` only. */
  readonly statement?: number;
  /** The ids recorded in the schema that this code does not know; with `migration_unknown_applied` only. */
  readonly unknown?: readonly string[];
  /** The database's error, when one stopped the step. */
  readonly cause?: unknown;
}

function messageOf(code: MigrationErrorCode, details: MigrationErrorDetails): string {
  const { schema, cause } = details;
  const reason = cause instanceof Error ? cause.message : String(cause);
  switch (code) {
    case "migration_failed":
      return `Migration "${details.migration}" in schema "${schema}" failed at statement ${details.statement}: ${reason}`;
    case "migration_schema_failed":
      return `Migrations in schema "${schema}": creating the schema failed: ${reason}`;
    case "migration_history_failed":
      return `Migrations in schema "${schema}": creating or reading its rest_webhooks_migrations table failed: ${reason}`;
    case "migration_unknown_applied":
      return (
        `Schema "${schema}" records migrations this code does not know (${(details.unknown ?? []).map((id) => `"${id}"`).join(", ")}), ` +
        "applied by a newer release: nothing was applied. Run the newer release, or pass { allowUnknown: true } to migrate " +
        "once you know this release works on the newer tables."
      );
  }
}

/**
 * Thrown by `migrate` when a step stops it: a migration's statement, creating a schema or its migration table, or a
 * history holding migrations this code does not know ({@link MigrationErrorCode}), so that the operator reading a
 * failed start-up knows where to look. The database's own error is the `cause` (its SQLSTATE in `cause.code` on `pg`
 * and PGlite). The transaction was rolled back: no step of that call is recorded.
 */
export class MigrationError extends Error {
  override readonly name = "MigrationError";
  readonly code: MigrationErrorCode;
  /** The schema the step worked in. */
  readonly schema: string;
  /** The migration's id, as recorded (`delivery@3`), when a statement of it failed. */
  readonly migration: string | undefined;
  /** Which of its statements failed, from 1, when one did. */
  readonly statement: number | undefined;
  /** The migrations recorded in the schema that this code does not know (`migration_unknown_applied`), else empty. */
  readonly unknown: readonly string[];
  constructor(code: MigrationErrorCode, details: MigrationErrorDetails) {
    super(messageOf(code, details), details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.schema = details.schema;
    this.migration = details.migration;
    this.statement = details.statement;
    this.unknown = details.unknown ?? [];
  }
}
