import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

it("the resource and consumer laws run under node's own test runner (node --test)", () => {
  const file = fileURLToPath(new URL("./node-runner/laws.node.ts", import.meta.url));
  const run = spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-reporter=spec", file], {
    encoding: "utf8",
    timeout: 120_000,
  });
  const output = run.stderr + run.stdout;
  expect(output).toMatch(/# fail 0|ℹ fail 0/);
  expect(run.stdout).toMatch(/ℹ pass [1-9]/);
  // Both suites ran, each law by name.
  expect(run.stdout).toContain("consumer laws");
  expect(run.stdout).toContain("duplicates are processed once");
  expect(run.stdout).toContain("one Idempotency-Key creates one resource");
  expect(run.status, output).toBe(0);
});
