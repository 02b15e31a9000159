import { mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { lockDirectory } from "./pglite-lock";
import type { SqlTransactor } from "./sql-client";

/** An embedded PGlite database on a data directory, opened by {@link openPglite}. */
export interface PgliteDatabase extends SqlTransactor {
  /** The data directory, absolute. */
  readonly dataDir: string;
  /** Closes the database and releases the directory's lock (only while the lock file is still this process's). */
  close(): Promise<void>;
}

/** Options of {@link openPglite}. */
export interface OpenPgliteOptions {
  /** Called before a directory is initialised for the first time (initdb takes a few seconds). */
  onInitialise?: (dataDir: string) => void;
}

/**
 * Opens (creating it on first use) an embedded PGlite database on a data directory, for every store of this library
 * (`SqlDatabase`). The directory is locked for this process: PGlite is a single connection in a single process, and
 * a second opener of the same files would corrupt them, so opening a directory that is open already, in another
 * process or in this one (in any of its worker threads), throws a `PgliteLockError` (code `pglite_directory_in_use`)
 * naming the directory and the holder. A lock left by a process that died is taken over. `@electric-sql/pglite` is
 * an optional peer dependency, loaded only here.
 * @param dataDir where the files live (created if missing).
 * @throws {PgliteLockError} `pglite_directory_in_use` while the directory is open, here or in a live process.
 * @example
 * const db = await openPglite(".data/app");
 * await migrate(db, deliveryMigrations());
 * const queue = createPostgresDeliveryQueue({ client: db });
 */
export async function openPglite(dataDir: string, options: OpenPgliteOptions = {}): Promise<PgliteDatabase> {
  const dir = resolve(dataDir);
  let created = false;
  try {
    mkdirSync(dir, { recursive: false });
    created = true;
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT") {
      mkdirSync(dir, { recursive: true });
      created = true;
    } else if ((error as { code?: unknown }).code !== "EEXIST") throw error;
  }
  const unlock = lockDirectory(dir);
  try {
    const fresh = created || !existsPgVersion(dir);
    if (fresh) options.onInitialise?.(dir);
    const { PGlite } = await import("@electric-sql/pglite");
    const db = await PGlite.create(dir);
    // A view of the instance, so that closing also unlocks; `exec` marks it as PGlite for the kit.
    return {
      dataDir: dir,
      query: (text, values) => db.query(text, values),
      transaction: (work) => db.transaction(work),
      exec: (sql: string) => db.exec(sql),
      async close() {
        try {
          await db.close();
        } finally {
          unlock();
        }
      },
    } as PgliteDatabase;
  } catch (error) {
    unlock();
    throw error;
  }
}

function existsPgVersion(dir: string): boolean {
  try {
    readFileSync(join(dir, "PG_VERSION"));
    return true;
  } catch {
    return false;
  }
}
