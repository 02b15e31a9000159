/**
 * The PostgreSQL backends every single-process PostgreSQL suite runs on: embedded PGlite always (loaded from the
 * run's dump, see pglite-setup.ts), and the server too when DATABASE_URL is set (as .ci/run does). Suites iterate
 * `databases()`, so a machine without a server still runs every one of them.
 */
import { readFileSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { describe, inject } from "vitest";
import type { SqlDatabase } from "../../src/postgres/index";
import { databaseUrl } from "./services";

/** An open database of one backend. */
export interface OpenDatabase {
  readonly db: SqlDatabase;
  close(): Promise<void>;
}

/** A backend: its name in test titles, and how to open a database on it. */
export interface Backend {
  readonly name: "pglite" | "postgres";
  /** Whether several connections (and so several processes or lock waits) exist: a server only. */
  readonly concurrent: boolean;
  open(options?: { max?: number }): Promise<OpenDatabase>;
}

/** A fresh PGlite from the run's dump: one connection, in this process. */
export async function openPgliteForTest(): Promise<PGlite> {
  return PGlite.create({ loadDataDir: new Blob([readFileSync(inject("pgliteDump"))]) });
}

const pglite: Backend = {
  name: "pglite",
  concurrent: false,
  async open() {
    const db = await openPgliteForTest();
    return { db, close: () => db.close() };
  },
};

const server: Backend = {
  name: "postgres",
  concurrent: true,
  async open(options = {}) {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: options.max ?? 6 });
    return { db: pool, close: () => pool.end() };
  },
};

/** PGlite, and the server when DATABASE_URL is set. */
export function databases(): readonly Backend[] {
  return databaseUrl === undefined ? [pglite] : [pglite, server];
}

const announced = new Set<string>();

/**
 * Defines the suite `name` when a PostgreSQL server is there (DATABASE_URL): for what only a server has (a pg Pool
 * or Client, several processes on one database). Without one it is not defined, with the reason printed once: the
 * same contract has already run on PGlite, so nothing is skipped untested.
 */
export function onServer(name: string, suite: () => void, why = "it runs on a pg client"): void {
  if (databaseUrl !== undefined) {
    describe(name, suite);
    return;
  }
  if (!announced.has(name)) {
    announced.add(name);
    console.info(`[server only] "${name}": needs a PostgreSQL server (DATABASE_URL): ${why}`);
  }
}
