/**
 * vitest globalSetup: one initialised PGlite data directory, dumped once per run, which every PGlite-backed suite
 * loads (under a second) instead of running initdb (several seconds) itself.
 */
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** A file holding the dump of a freshly initialised PGlite data directory. */
    pgliteDump: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const db = await PGlite.create();
  const dump = await db.dumpDataDir("none");
  await db.close();
  const file = join(tmpdir(), `rest-webhooks-pglite-${process.pid}.tar`);
  writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  project.provide("pgliteDump", file);
  return () => rmSync(file, { force: true });
}
