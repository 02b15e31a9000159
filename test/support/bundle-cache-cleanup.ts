/**
 * Vitest global setup: at the start and the end of a run, removes the bundles of test/support/bundled-script.ts whose
 * worker is gone (vitest may end a worker without its exit handlers, and some outlive the teardown). Never those of a
 * process still running: another vitest run, a single file beside the suite, may be using them.
 */
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { BUNDLE_CACHE } from "./bundled-script";

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function removeOrphans(): void {
  let names: string[];
  try {
    names = readdirSync(BUNDLE_CACHE);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^bundle-(\d+)-/.exec(name)?.[1]);
    // Bundles named before the pid was part of the name are removed too.
    if (!Number.isInteger(pid) || !running(pid)) rmSync(join(BUNDLE_CACHE, name), { recursive: true, force: true });
  }
}

export const setup = removeOrphans;
export const teardown = removeOrphans;
