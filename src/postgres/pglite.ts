import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { SqlTransactor } from "./sql-client";

/** An embedded PGlite database on a data directory, opened by {@link openPglite}. */
export interface PgliteDatabase extends SqlTransactor {
  /** The data directory, absolute. */
  readonly dataDir: string;
  /** Closes the database and releases the directory's lock. */
  close(): Promise<void>;
}

/** Options of {@link openPglite}. */
export interface OpenPgliteOptions {
  /** Called before a directory is initialised for the first time (initdb takes a few seconds). */
  onInitialise?: (dataDir: string) => void;
}

/** The lock file PGlite's data directory carries while a process has it open. */
export const PGLITE_LOCK_FILE = "rest-webhooks.lock";

// Whether a process with this id is alive (signal 0 checks without sending anything).
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === "EPERM";
  }
}

/** Takes the directory for this process, or throws naming the process that has it. */
function lock(dataDir: string): () => void {
  const file = join(dataDir, PGLITE_LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: "wx" });
      return () => rmSync(file, { force: true });
    } catch (error) {
      if ((error as { code?: unknown }).code !== "EEXIST") throw error;
      const holder = Number(readFileSync(file, "utf8"));
      if (Number.isSafeInteger(holder) && holder !== process.pid && alive(holder)) {
        throw new Error(
          `openPglite: the data directory ${dataDir} is in use by process ${holder}. PGlite is one connection in one process: stop that process, or give this one another directory (or use a PostgreSQL server to share one database).`,
        );
      }
      // A lock left by a process that died (SIGKILL, a crash): take the directory over.
      rmSync(file, { force: true });
    }
  }
  throw new Error(`openPglite: could not lock ${dataDir}`);
}

/**
 * Opens (creating it on first use) an embedded PGlite database on a data directory, for every store of this library
 * (`SqlDatabase`). The directory is locked for this process: PGlite is a single connection in a single process, and
 * a second process opening the same files would corrupt them, so that is refused with an error naming the holder.
 * A lock left by a process that died is taken over. `@electric-sql/pglite` is an optional peer dependency, loaded
 * only here.
 * @param dataDir where the files live (created if missing).
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
  const unlock = lock(dir);
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
