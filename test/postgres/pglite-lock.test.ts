/**
 * The data-directory lock of openPglite: one opener per directory, in this process or any other; a lock left by a
 * dead process is taken over; a lock file is removed only by the process it names.
 */
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { transformSync } from "esbuild";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openPglite, PGLITE_LOCK_FILE } from "../../src/postgres/index";
import { lockDirectory } from "../../src/postgres/pglite-lock";

// A pid no process has: above Linux's pid_max ceiling (2^22).
const DEAD_PID = 4_194_304 + 7;

let dir: string;
let lockFile: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "pglite-lock-")));
  lockFile = join(dir, PGLITE_LOCK_FILE);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const held = () => readFileSync(lockFile, "utf8");

describe("lockDirectory", () => {
  it("writes this process's pid and removes the file on release", () => {
    const release = lockDirectory(dir);
    expect(held()).toBe(String(process.pid));
    release();
    expect(existsSync(lockFile)).toBe(false);
    // Nothing is left beside it (the pid is written aside, then linked).
    expect(readdirSync(dir)).toEqual([]);
  });

  // Regression: `holder !== process.pid` treated this process's own lock as stale, so a second open succeeded.
  it("refuses a second lock of a directory this process holds, naming it", () => {
    const release = lockDirectory(dir);
    expect(() => lockDirectory(dir)).toThrow(
      expect.objectContaining({ code: "pglite_directory_in_use", dataDir: dir }),
    );
    // The same directory through another path (a symlink) is the same directory.
    const alias = `${dir}-alias`;
    symlinkSync(dir, alias);
    try {
      expect(() => lockDirectory(alias)).toThrow(expect.objectContaining({ holder: process.pid }));
    } finally {
      rmSync(alias);
    }
    release();
    lockDirectory(dir)();
  });

  it("refuses a directory a live process holds, naming that process", () => {
    writeFileSync(lockFile, String(process.ppid));
    expect(() => lockDirectory(dir)).toThrow(
      expect.objectContaining({ code: "pglite_directory_in_use", holder: process.ppid }),
    );
    expect(held()).toBe(String(process.ppid));
  });

  it("takes over a lock left by a dead process", () => {
    writeFileSync(lockFile, String(DEAD_PID));
    const release = lockDirectory(dir);
    expect(held()).toBe(String(process.pid));
    release();
  });

  it("takes over a lock naming this pid that this process does not hold (an earlier process with the same pid)", () => {
    writeFileSync(lockFile, String(process.pid));
    // Written before this process started, as the lock of a process that had this pid before it was.
    const before = new Date(Date.now() - process.uptime() * 1000 - 60_000);
    utimesSync(lockFile, before, before);
    const release = lockDirectory(dir);
    expect(held()).toBe(String(process.pid));
    release();
  });

  // Regression: `held` is one worker thread's, and every thread has the process's pid, so a lock naming this pid
  // that this thread did not hold read as an earlier process's: a second thread took over a directory another
  // thread had open, and two PGlite instances wrote one data directory.
  it("refuses a lock naming this pid written since this process started (another worker thread's)", () => {
    writeFileSync(lockFile, String(process.pid));
    expect(() => lockDirectory(dir)).toThrow(
      expect.objectContaining({ code: "pglite_directory_in_use", holder: process.pid }),
    );
    expect(held()).toBe(String(process.pid));
  });

  it("refuses a directory another worker thread of this process holds", async () => {
    // The worker runs this very file, built to JavaScript: a thread has module state (`held`) of its own.
    const source = readFileSync(fileURLToPath(new URL("../../src/postgres/pglite-lock.ts", import.meta.url)), "utf8");
    const built = join(dir, "..", `${dir.split("/").pop()}-lock.mjs`);
    writeFileSync(built, transformSync(source, { loader: "ts", format: "esm" }).code);
    const release = lockDirectory(dir);
    try {
      const worker = new Worker(
        `import(${JSON.stringify(pathToFileURL(built).href)}).then(({ lockDirectory }) => {
          const { parentPort, workerData } = require("node:worker_threads");
          try { lockDirectory(workerData); parentPort.postMessage("locked"); }
          catch (error) { parentPort.postMessage(error.code); }
        });`,
        { eval: true, workerData: dir },
      );
      const answer = await new Promise((resolve, reject) => {
        worker.once("message", resolve);
        worker.once("error", reject);
      });
      await worker.terminate();
      expect(answer).toBe("pglite_directory_in_use");
      expect(held()).toBe(String(process.pid));
    } finally {
      release();
      rmSync(built, { force: true });
    }
  });

  // Regression: the lock was written aside under a name of the process's pid alone, so two threads taking one
  // directory at once wrote, linked and removed the same file, and the loser failed with a bare ENOENT (about one
  // race in twelve) rather than a PgliteLockError naming the holder.
  it("lets exactly one of two threads racing for a directory take it, and tells the other who holds it", async () => {
    const source = readFileSync(fileURLToPath(new URL("../../src/postgres/pglite-lock.ts", import.meta.url)), "utf8");
    const built = join(dir, "..", `${dir.split("/").pop()}-race.mjs`);
    writeFileSync(built, transformSync(source, { loader: "ts", format: "esm" }).code);
    // Both threads spin on a shared counter until both are there, then lock at once.
    const racer = `import(${JSON.stringify(pathToFileURL(built).href)}).then(({ lockDirectory }) => {
      const { parentPort, workerData } = require("node:worker_threads");
      const ready = new Int32Array(workerData.ready);
      Atomics.add(ready, 0, 1);
      while (Atomics.load(ready, 0) < 2) {}
      try { lockDirectory(workerData.dir); parentPort.postMessage("locked"); }
      catch (error) { parentPort.postMessage(error.code); }
    });`;
    try {
      for (let race = 0; race < 60; race++) {
        const target = mkdtempSync(join(dir, "race-"));
        const ready = new SharedArrayBuffer(4);
        const workers = [0, 1].map(() => new Worker(racer, { eval: true, workerData: { dir: target, ready } }));
        const answers = await Promise.all(
          workers.map(
            (worker) =>
              new Promise((resolve, reject) => {
                worker.once("message", resolve);
                worker.once("error", reject);
              }),
          ),
        );
        await Promise.all(workers.map((worker) => worker.terminate()));
        expect(answers.sort(), `race ${race}`).toEqual(["locked", "pglite_directory_in_use"]);
      }
    } finally {
      rmSync(built, { force: true });
    }
  });

  // Regression: a lock file read before its pid was written parsed as pid 0, "in use by process 0".
  it("takes over a lock file holding no pid rather than naming process 0", () => {
    writeFileSync(lockFile, "");
    lockDirectory(dir)();
    writeFileSync(lockFile, "not a pid");
    lockDirectory(dir)();
  });

  // Regression: closing either of two copies deleted the lock, whoever held it by then.
  it("leaves the lock file alone on release when another process has taken it since", () => {
    const release = lockDirectory(dir);
    writeFileSync(lockFile, String(process.ppid));
    release();
    expect(held()).toBe(String(process.ppid));
  });

  it("releases once: a second release does not drop a later lock", () => {
    const release = lockDirectory(dir);
    release();
    const again = lockDirectory(dir);
    release();
    expect(held()).toBe(String(process.pid));
    expect(() => lockDirectory(dir)).toThrow(expect.objectContaining({ code: "pglite_directory_in_use" }));
    again();
  });
});

describe("openPglite", () => {
  it("refuses to open a directory this process is opening, and unlocks when opening fails", async () => {
    const stop = new Error("stop before initdb");
    let second: Promise<unknown> | undefined;
    await expect(
      openPglite(dir, {
        onInitialise: () => {
          second = openPglite(dir);
          // Handled below; keep the rejection from being reported as unhandled meanwhile.
          second.catch(() => {});
          throw stop;
        },
      }),
    ).rejects.toBe(stop);
    await expect(second).rejects.toMatchObject({ code: "pglite_directory_in_use", dataDir: dir, holder: process.pid });
    expect(existsSync(lockFile)).toBe(false);
  });
});
