/**
 * The built executable: package.json `bin` names dist/cli/main.js, tsup builds it from src/cli/main.ts with a
 * shebang (only the CLI entry, ESM, no types: about a second), and the file runs directly and through node.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "tsup";
import { beforeAll, describe, expect, it } from "vitest";
import { generateSecret, sign } from "../../src/webhooks/signing/index";
import { cliBuild } from "../../tsup.config";
import { root, runCli } from "./run-cli";

const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { bin: Record<string, string> };
const bin = join(root, pkg.bin["rest-webhooks"] ?? "missing");

describe("the built rest-webhooks executable", () => {
  beforeAll(async () => {
    await build({ ...cliBuild, silent: true });
    chmodSync(bin, 0o755); // npm sets the mode on install
  }, 120_000);

  it("is the bin of package.json, built by tsup with a shebang", () => {
    expect(pkg.bin).toEqual({ "rest-webhooks": "./dist/cli/main.js" });
    expect(readFileSync(bin, "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
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
