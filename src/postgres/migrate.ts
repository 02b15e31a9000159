import { identifierName, quoteIdentifier, tableIn } from "./identifier";
import { MigrationError, type MigrationErrorCode } from "./migration-error";
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

/** Options of {@link migrate}. */
export interface MigrateOptions {
  /**
   * Go on when a schema records migrations of a store that this code does not know (applied by a newer release, which
   * an older one then started on): the known ones still missing are applied, the unknown ones left as they are. Only
   * for a release you know works on the newer tables, such as during a rolling deploy or a rollback. @default false
   */
  readonly allowUnknown?: boolean;
}

// A migration's store and version, from an id `<store>@<n>` (`delivery@3`); other ids have none.
const versionOf = (id: string): { store: string; version: number } | undefined => {
  const match = /^(.*)@(\d{1,15})$/.exec(id);
  return match === null ? undefined : { store: match[1] as string, version: Number(match[2]) };
};

// A statement of a step other than a migration's own, its failure reported as that step.
async function step<T>(code: MigrationErrorCode, schema: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (cause) {
    throw new MigrationError(code, { schema, cause });
  }
}

async function appliedIn(tx: SqlClient, schema: string): Promise<Set<string>> {
  const table = tableIn(schema, MIGRATIONS_TABLE);
  await step("migration_schema_failed", schema, () => tx.query(createSchema(schema)));
  const { rows } = await step("migration_history_failed", schema, async () => {
    await tx.query(
      `CREATE TABLE IF NOT EXISTS ${table} (id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    return tx.query(`SELECT id FROM ${table} ORDER BY id`);
  });
  return new Set(rows.map((row) => String((row as { id: unknown }).id)));
}

/**
 * Applies the migrations not yet recorded in their schema's `rest_webhooks_migrations` table, in order, in one
 * transaction under an advisory lock: safe to call at every start, from several processes at once, at any
 * `default_transaction_isolation`. A caller that finds another at work waits for it to finish, then starts afresh.
 * A schema recording a later version of one of these stores than `migrations` holds (`delivery@13` where this release
 * knows up to `delivery@12`, ids being `<store>@<n>`: a newer release migrated it) is refused, nothing applied, unless
 * `allowUnknown`: this release's code may not work on the newer tables. Other stores' migrations are not looked at.
 * @param db a pool, client or PGlite.
 * @param migrations e.g. `[...idempotencyMigrations(), ...deliveryMigrations()]`.
 * @param options `allowUnknown`.
 * @returns the ids applied now (empty when everything was there).
 * @throws {@link MigrationError}, nothing of the call applied then: `migration_failed` naming the migration and
 *   statement that failed, `migration_schema_failed` or `migration_history_failed` naming the schema whose setup
 *   failed (the database's error as `cause`), `migration_unknown_applied` naming the unknown ids. A TypeError, before
 *   any statement, for a schema PostgreSQL would not keep as given (empty, a NUL, over 63 bytes); any other name is
 *   quoted, so `My "App"` is that schema.
 * @example await migrate(pool, deliveryMigrations({ schema: "shop" }))
 */
export async function migrate(
  db: SqlDatabase,
  migrations: readonly Migration[],
  options: MigrateOptions = {},
): Promise<string[]> {
  checkSchemas(migrations, "migrate");
  const allowUnknown = options.allowUnknown === true;
  for (;;) {
    const applied = await transaction(db, async (tx) => {
      const { rows } = await tx.query("SELECT pg_try_advisory_xact_lock($1) AS locked", [MIGRATION_LOCK]);
      if ((rows[0] as { locked?: unknown } | undefined)?.locked === true) {
        return applyPending(tx, migrations, allowUnknown);
      }
      // Not in a transaction that waited: its snapshot (REPEATABLE READ, SERIALIZABLE) and the backend's catalog
      // cache (a schema looked up while missing) predate the holder's commit, so it would run the steps again.
      await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
      return undefined;
    });
    if (applied !== undefined) return applied;
  }
}

// Each schema's history, read once, checked for versions of these stores newer than the list's.
async function historyOf(
  tx: SqlClient,
  migrations: readonly Migration[],
  allowUnknown: boolean,
): Promise<Map<string, Set<string>>> {
  const known = new Map<string, Set<string>>();
  for (const { schema, id } of migrations) {
    const ids = known.get(schema) ?? new Set<string>();
    known.set(schema, ids.add(id));
  }
  const history = new Map<string, Set<string>>();
  for (const [schema, ids] of known) {
    const done = await appliedIn(tx, schema);
    history.set(schema, done);
    if (allowUnknown) continue;
    // Past the latest version the list knows of its store: an older id missing from the list (a migration list
    // given from some version on) is no sign of a newer release.
    const latest = new Map<string, number>();
    for (const id of ids) {
      const known = versionOf(id);
      if (known !== undefined) latest.set(known.store, Math.max(known.version, latest.get(known.store) ?? 0));
    }
    const unknown = [...done].filter((id) => {
      const recorded = versionOf(id);
      const upTo = recorded === undefined ? undefined : latest.get(recorded.store);
      return recorded !== undefined && upTo !== undefined && recorded.version > upTo;
    });
    if (unknown.length > 0) throw new MigrationError("migration_unknown_applied", { schema, unknown });
  }
  return history;
}

async function applyPending(tx: SqlClient, migrations: readonly Migration[], allowUnknown: boolean): Promise<string[]> {
  const applied = await historyOf(tx, migrations, allowUnknown);
  const now: string[] = [];
  for (const migration of migrations) {
    const done = applied.get(migration.schema) as Set<string>;
    if (done.has(migration.id)) continue;
    for (const [index, statement] of migration.statements.entries()) {
      try {
        await tx.query(statement);
      } catch (cause) {
        throw new MigrationError("migration_failed", {
          schema: migration.schema,
          migration: migration.id,
          statement: index + 1,
          cause,
        });
      }
    }
    await tx.query(`INSERT INTO ${tableIn(migration.schema, MIGRATIONS_TABLE)} (id) VALUES ($1)`, [migration.id]);
    done.add(migration.id);
    now.push(`${migration.schema}:${migration.id}`);
  }
  return now;
}
