/**
 * The built executable: package.json `bin` names dist/cli/main.js, tsup builds it from src/cli/main.ts with a
 * shebang (only the CLI entry, ESM, no types: about a second), and the file runs directly and through node. The
 * test builds with the package's CLI options into a directory of its own, so it never rewrites the dist/ that the
 * build step made and the package checks read.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { build } from "tsup";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateSecret, sign } from "../../src/webhooks/signing/index";
import { cliBuild } from "../../tsup.config";
import { root, runCli } from "./run-cli";

const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { bin: Record<string, string> };
// Inside the project (node_modules/.cache, ignored by git), so the chunks resolve their dependencies as dist/'s do.
const cache = join(root, "node_modules", ".cache");
mkdirSync(cache, { recursive: true });
const outDir = mkdtempSync(join(cache, "rest-webhooks-bin-"));
const bin = join(outDir, "main.js");

// tsup's `build()` also loads tsup.config.ts unless told not to, and runs each of its builds with these options laid
// over it: both (the library's, with its tree shaking, and the CLI's) wrote the same files at once, so a chunk could
// hold a shorter build written over the start of a longer one (the bin test's old flake, "Illegal return statement").
let builds = 0;

describe("the built rest-webhooks executable", () => {
  beforeAll(async () => {
    await build({ ...cliBuild, outDir, silent: true, config: false, onSuccess: async () => void builds++ });
    chmodSync(bin, 0o755); // npm sets the mode on install
  }, 120_000);
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it("is the bin of package.json, built by tsup with a shebang", () => {
    expect(pkg.bin).toEqual({ "rest-webhooks": "./dist/cli/main.js" });
    expect(cliBuild.outDir).toBe("dist/cli");
    expect(cliBuild.entry).toEqual({ main: "src/cli/main.ts" });
    expect(readFileSync(bin, "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
    expect(builds).toBe(1); // cliBuild alone, never beside the config file's builds
  });

  it("runs directly: --help lists the four commands", () => {
    const help = execFileSync(bin, ["--help"], { cwd: root, env: { ...process.env, NO_COLOR: "1" } }).toString();
    for (const command of ["listen", "send", "verify", "check"]) expect(help).toContain(`  ${command} `);
  });

  it("verifies a capture as the sources do", async () => {
    const secret = generateSecret();
    const body = '{"type":"ping","data":{}}';
    const headers = sign({ id: "msg_bin", timestamp: Math.floor(Date.now() / 1000), body, secrets: secret });
    const capture = `${Object.entries(headers)
      .map(([n, v]) => `${n}: ${v}`)
      .join("\n")}\n\n${body}`;
    const run = await runCli(["verify", "--secret", secret], { stdin: capture, entry: [bin] });
    expect(run.stdout).toContain("✓ verified as standard-webhooks (id msg_bin)");
    expect(run.code).toBe(0);
  });
});
