import { identifierName, quoteIdentifier, tableIn } from "./identifier";
import { MigrationError } from "./migration-error";
import type { SqlClient, SqlDatabase } from "./sql-client";
import { transaction } from "./transaction";

/**
 * One versioned step of a store's schema: `id` is recorded once applied (`delivery@1`), `statements` run in
 * order, each on its own (PGlite's extended protocol takes one statement per query).
 */
export interface Migration {
  readonly id: string;
  readonly schema: string;
  readonly statements: readonly string[];
}

/** The table recording applied migrations, in each schema that has some. */
export const MIGRATIONS_TABLE = "rest_webhooks_migrations";

// Any 64-bit key: every migrator of every schema takes the same lock, so two processes never race a CREATE.
const MIGRATION_LOCK = 4_242_017;

/**
 * The SQL of the migrations as one script, for your own migration tool (Flyway, Sqitch, node-pg-migrate, …): the
 * DDL {@link migrate} runs, each schema created (`CREATE SCHEMA IF NOT EXISTS`) before its first migration. Every
 * statement is idempotent (`IF NOT EXISTS`), so running it over an existing schema changes nothing. It does not
 * record the migrations in `rest_webhooks_migrations`: `migrate` run afterwards applies them again, changing nothing.
 * @example writeFileSync("migrations/001_webhooks.sql", migrationSql(deliveryMigrations({ schema: "app" })))
 */
export function migrationSql(migrations: readonly Migration[]): string {
  checkSchemas(migrations, "migrationSql");
  const created = new Set<string>();
  return migrations
    .map((migration) => {
      const schema = created.has(migration.schema) ? "" : `${createSchema(migration.schema)};\n`;
      created.add(migration.schema);
      // A line break would end the comment, and the rest of the line would run: a `--` comment ends at \n or \r.
      const title = `${migration.schema}: ${migration.id}`.replace(/[\r\n]+/g, " ");
      return `-- ${title}\n${schema}${migration.statements.join(";\n")};\n`;
    })
    .join("\n");
}

// The one statement creating a schema, for migrate() and migrationSql() alike.
function createSchema(schema: string): string {
  return `CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`;
}

// Every schema checked before the first statement runs, so a bad name late in the list applies nothing.
function checkSchemas(migrations: readonly Migration[], what: string): void {
  for (const migration of migrations) identifierName(migration.schema, `${what}: migration ${migration.id}'s schema`);
}

async function appliedIn(tx: SqlClient, schema: string): Promise<Set<string>> {
  const table = tableIn(schema, MIGRATIONS_TABLE);
  await tx.query(createSchema(schema));
  await tx.query(
    `CREATE TABLE IF NOT EXISTS ${table} (id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
  );
  const { rows } = await tx.query(`SELECT id FROM ${table}`);
  return new Set(rows.map((row) => String((row as { id: unknown }).id)));
}

/**
 * Applies the migrations not yet recorded in their schema's `rest_webhooks_migrations` table, in order, in one
 * transaction under an advisory lock: safe to call at every start, from several processes at once, at any
 * `default_transaction_isolation`. A caller that finds another at work waits for it to finish, then starts afresh.
 * @param db a pool, client or PGlite.
 * @param migrations e.g. `[...idempotencyMigrations(), ...deliveryMigrations()]`.
 * @returns the ids applied now (empty when everything was there).
 * @throws {@link MigrationError} naming the migration and statement that failed (the database's error as `cause`);
 *   nothing of the call is applied then. A TypeError, before any statement, for a schema PostgreSQL would not keep
 *   as given (empty, a NUL, over 63 bytes); any other name is quoted, so `My "App"` is that schema.
 * @example await migrate(pool, deliveryMigrations({ schema: "shop" }))
 */
export async function migrate(db: SqlDatabase, migrations: readonly Migration[]): Promise<string[]> {
  checkSchemas(migrations, "migrate");
  for (;;) {
    const applied = await transaction(db, async (tx) => {
      const { rows } = await tx.query("SELECT pg_try_advisory_xact_lock($1) AS locked", [MIGRATION_LOCK]);
      if ((rows[0] as { locked?: unknown } | undefined)?.locked === true) return applyPending(tx, migrations);
      // Not in a transaction that waited: its snapshot (REPEATABLE READ, SERIALIZABLE) and the backend's catalog
      // cache (a schema looked up while missing) predate the holder's commit, so it would run the steps again.
      await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
      return undefined;
    });
    if (applied !== undefined) return applied;
  }
}

async function applyPending(tx: SqlClient, migrations: readonly Migration[]): Promise<string[]> {
  const applied = new Map<string, Set<string>>();
  const now: string[] = [];
  for (const migration of migrations) {
    let done = applied.get(migration.schema);
    if (done === undefined) {
      done = await appliedIn(tx, migration.schema);
      applied.set(migration.schema, done);
    }
    if (done.has(migration.id)) continue;
    for (const [index, statement] of migration.statements.entries()) {
      try {
        await tx.query(statement);
      } catch (error) {
        throw new MigrationError(migration.id, migration.schema, index + 1, error);
      }
    }
    await tx.query(`INSERT INTO ${tableIn(migration.schema, MIGRATIONS_TABLE)} (id) VALUES ($1)`, [migration.id]);
    done.add(migration.id);
    now.push(`${migration.schema}:${migration.id}`);
  }
  return now;
}
