/**
 * Thrown by `migrate` when a step's statement fails: which migration, in which schema, and which of its statements,
 * so that the operator reading a failed start-up knows where to look. The database's own error is the `cause` (its
 * SQLSTATE in `cause.code` on `pg` and PGlite). The transaction was rolled back: no step of that call is recorded.
 */
export class MigrationError extends Error {
  override readonly name = "MigrationError";
  readonly code = "migration_failed";
  constructor(
    /** The migration's id, as recorded (`delivery@3`). */
    readonly migration: string,
    /** The schema it was applied in. */
    readonly schema: string,
    /** Which of its statements failed, from 1. */
    readonly statement: number,
    cause: unknown,
  ) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`Migration "${migration}" in schema "${schema}" failed at statement ${statement}: ${reason}`, { cause });
  }
}
