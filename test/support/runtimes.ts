/**
 * Finds the Bun and Deno binaries the `bun` and `deno` dev dependencies install, and runs a command on them.
 * Their postinstall scripts link the platform package's binary into place; where an npm did not run them
 * (`--ignore-scripts`, or an npm that asks before running them), the binary is still in the platform package
 * (`@oven/bun-<os>-<arch>`, `@deno/<os>-<arch>-<libc>`), and that one is used.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("../../", import.meta.url));
const modules = join(root, "node_modules");

function platformBinaries(scope: string, relative: string): string[] {
  const dir = join(modules, scope);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.includes(process.platform) && name.includes(process.arch))
    .map((name) => join(dir, name, relative));
}

const candidates = {
  bun: () => [join(modules, "bun", "bin", "bun.exe"), ...platformBinaries("@oven", join("bin", "bun"))],
  deno: () => [join(modules, "deno", "deno"), ...platformBinaries("@deno", "deno")],
};

/** The first candidate binary that answers `--version`; throws, listing what was tried, when none does. */
export function runtimeBinary(name: "bun" | "deno"): string {
  const tried = candidates[name]();
  for (const path of tried) {
    if (existsSync(path) && spawnSync(path, ["--version"], { timeout: 30_000 }).status === 0) return path;
  }
  throw new Error(`no runnable ${name} binary; tried ${tried.join(", ")}. Run npm ci.`);
}

/** Runs `binary args` in the repository root and collects its output (a child this test started and awaits). */
export function run(
  binary: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { cwd: root, env: { ...process.env, ...env, NO_COLOR: "1", FORCE_COLOR: "0" } });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, output }));
  });
}
