// The as-built loader (as-built-loader.mjs) keeps one output per version of each source it compiled and never removes
// one itself: a process cannot tell a stale output from one that another checkout of the same node_modules still
// uses. `npm run bench` removes outputs written more than a week ago, so at worst a module is compiled once more.
// `npm ci` removes the whole cache with node_modules.
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const WEEK_MS = 7 * 24 * 3600 * 1000;

const AS_BUILT_CACHE = fileURLToPath(new URL("../../node_modules/.cache/rest-webhooks-as-built/", import.meta.url));

/** Removes the outputs in `cache` written before a week ago; answers how many. */
export function pruneAsBuilt(cache = AS_BUILT_CACHE, now = Date.now()) {
  if (!existsSync(cache)) return 0;
  let removed = 0;
  for (const name of readdirSync(cache)) {
    const path = join(cache, name);
    const modified = statSync(path, { throwIfNoEntry: false })?.mtimeMs;
    if (modified !== undefined && modified < now - WEEK_MS) {
      rmSync(path, { force: true });
      removed++;
    }
  }
  return removed;
}
