#!/usr/bin/env node
// npm run bench [suite...]: runs bench/<suite>/index.ts for each named suite, or every suite, compiled as the package
// is built (support/as-built-loader.mjs).
// Each suite prints its environment and ends with "ratio: <case> vs <peer> = <number>" lines.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { arch, cpus, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { pruneAsBuilt } from "./support/prune-as-built.mjs";

const root = fileURLToPath(new URL(".", import.meta.url));
const available = readdirSync(root, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(`${root}${entry.name}/index.ts`))
  .map((entry) => entry.name)
  .sort();
const requested = process.argv.slice(2);
const unknown = requested.filter((name) => !available.includes(name));
if (unknown.length > 0) {
  console.error(`unknown bench suite(s): ${unknown.join(", ")}; available: ${available.join(", ")}`);
  process.exit(2);
}
const suites = requested.length > 0 ? requested : available;

pruneAsBuilt();
console.log(
  `node ${process.version} ${arch()} · ${cpus().length} cores (${cpus()[0]?.model ?? "?"}) · ${Math.round(totalmem() / 2 ** 30)} GiB · ${new Date().toISOString()}`,
);
let failed = 0;
for (const suite of suites) {
  console.log(`\n## bench/${suite}`);
  const run = spawnSync(
    process.execPath,
    ["--import", `${root}support/as-built-loader.mjs`, `${root}${suite}/index.ts`],
    { stdio: "inherit" },
  );
  if (run.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);
