/**
 * bench/support/prune-as-built.mjs, which `npm run bench` runs first: the as-built loader's outputs written more
 * than a week ago go, newer ones stay, and a missing cache is no error.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const pruner = new URL("../../bench/support/prune-as-built.mjs", import.meta.url).href;
const DAY_MS = 24 * 3600 * 1000;
const NOW = Date.UTC(2026, 11, 2);

function prune(cache: string): number {
  const call = `m.pruneAsBuilt(${JSON.stringify(cache)}, ${NOW})`;
  const script = `import(${JSON.stringify(pruner)}).then((m) => console.log(${call}))`;
  return Number(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }).trim());
}

function output(cache: string, name: string, ageDays: number): void {
  const path = join(cache, name);
  writeFileSync(path, "export {};\n");
  const at = new Date(NOW - ageDays * DAY_MS);
  utimesSync(path, at, at);
}

describe("pruneAsBuilt", () => {
  const made: string[] = [];
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("removes outputs written more than a week ago and keeps the rest", () => {
    const cache = mkdtempSync(join(tmpdir(), "as-built-"));
    made.push(cache);
    output(cache, "stale.mjs", 8);
    output(cache, "a-week-less-an-hour.mjs", 7 - 1 / 24);
    output(cache, "today.mjs", 0);
    expect(prune(cache)).toBe(1);
    expect(readdirSync(cache).sort()).toEqual(["a-week-less-an-hour.mjs", "today.mjs"]);
  });

  it("answers 0 for a cache that does not exist yet", () => {
    expect(prune(join(tmpdir(), "as-built-never-made"))).toBe(0);
  });
});
