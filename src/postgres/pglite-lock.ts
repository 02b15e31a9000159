import { linkSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { threadId } from "node:worker_threads";

/** The lock file PGlite's data directory carries while a process has it open. */
export const PGLITE_LOCK_FILE = "rest-webhooks.lock";

/** Why `openPglite` could not take a data directory. */
export type PgliteLockErrorCode = "pglite_directory_in_use" | "pglite_directory_not_locked";

/** Thrown by `openPglite` when the data directory is open already (in this process or another) or cannot be locked. */
export class PgliteLockError extends Error {
  override readonly name = "PgliteLockError";
  constructor(
    readonly code: PgliteLockErrorCode,
    /** The data directory, absolute. */
    readonly dataDir: string,
    /** The process holding it, when one does. */
    readonly holder: number | undefined,
    message: string,
  ) {
    super(message);
  }
}

// The directories this thread has open (real paths, so a symlinked path is the same directory). Module state is per
// worker thread, and every thread has the process's pid: a lock file naming this pid but not listed here is another
// thread's when written since this process started, else an earlier process's that had the same pid (a container
// restarted as pid 1), stale.
const held = new Set<string>();

// Slack for the file system's clock, which stamps files from a coarse tick that can trail Date.now().
const STAMP_SLACK_MS = 100;

// Whether `file` (a lock naming this pid) was written since this process started: by one of its threads.
function writtenSinceStart(file: string): boolean {
  const started = Date.now() - process.uptime() * 1000;
  try {
    return statSync(file).mtimeMs >= started - STAMP_SLACK_MS;
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT") return false;
    throw error;
  }
}

// Whether a process with this id is alive (signal 0 checks without sending anything).
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === "EPERM";
  }
}

// The pid a lock file names; `undefined` when the file is gone, and 0 when it holds no pid (never a live holder).
function holderIn(file: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT") return undefined;
    throw error;
  }
  return /^[1-9][0-9]{0,9}$/.test(text) ? Number(text) : 0;
}

// Whether the lock `file` in `dir`, naming `pid`, belongs to a live holder.
function live(pid: number, dir: string, file: string): boolean {
  return pid === process.pid ? held.has(dir) || writtenSinceStart(file) : pid > 0 && alive(pid);
}

function inUse(dir: string, holder: number): PgliteLockError {
  const who =
    holder === process.pid ? "this process (opened twice, or by another of its threads)" : `process ${holder}`;
  return new PgliteLockError(
    "pglite_directory_in_use",
    dir,
    holder,
    `openPglite: the data directory ${dir} is in use by ${who}. PGlite is one connection in one process, and a second opener would corrupt its files: close the other, or give this one another directory (or use a PostgreSQL server to share one database).`,
  );
}

/**
 * Takes `dataDir` for this process, or throws a {@link PgliteLockError} naming the holder; returns the release.
 * The lock file appears complete (written aside, then hard-linked: link fails when the name exists, as O_EXCL),
 * so no reader sees it empty; a stale one is moved aside first (rename: one taker wins) and checked to be the
 * one found stale, so two processes taking over one dead holder's directory cannot both win.
 */
export function lockDirectory(dataDir: string): () => void {
  const dir = realpathSync(dataDir);
  if (held.has(dir)) throw inUse(dir, process.pid);
  const file = join(dir, PGLITE_LOCK_FILE);
  // Named for this thread, not only this process: two threads taking one directory at once would otherwise write,
  // link and remove the same file, and one would fail on the other's removal with a bare ENOENT.
  const self = `${process.pid}.${threadId}`;
  const mine = `${file}.${self}`;
  writeFileSync(mine, String(process.pid));
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        linkSync(mine, file);
        held.add(dir);
        let released = false;
        return () => {
          if (released) return;
          released = true;
          release(dir, file);
        };
      } catch (error) {
        if ((error as { code?: unknown }).code !== "EEXIST") throw error;
      }
      const holder = holderIn(file);
      if (holder === undefined) continue; // released meanwhile
      if (live(holder, dir, file)) throw inUse(dir, holder);
      // Left by a process that died (SIGKILL, a crash): take the directory over.
      const aside = `${file}.stale.${self}`;
      try {
        renameSync(file, aside);
      } catch (error) {
        if ((error as { code?: unknown }).code === "ENOENT") continue; // another taker moved it first
        throw error;
      }
      const moved = holderIn(aside);
      if (moved !== holder && moved !== undefined && live(moved, dir, aside)) {
        // Another taker had already replaced the stale lock with its own: give it back.
        try {
          linkSync(aside, file);
        } finally {
          rmSync(aside, { force: true });
        }
        throw inUse(dir, moved);
      }
      rmSync(aside, { force: true });
    }
  } finally {
    rmSync(mine, { force: true });
  }
  throw new PgliteLockError(
    "pglite_directory_not_locked",
    dir,
    undefined,
    `openPglite: could not lock ${dir}: its lock file (${PGLITE_LOCK_FILE}) kept changing`,
  );
}

// Removes the lock file only while it is still this process's (never one another process has taken since).
function release(dir: string, file: string): void {
  held.delete(dir);
  if (holderIn(file) === process.pid) rmSync(file, { force: true });
}
