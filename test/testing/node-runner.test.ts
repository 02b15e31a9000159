import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

it("the laws run under node's own test runner (node --test)", () => {
  const file = fileURLToPath(new URL("./node-runner/laws.node.ts", import.meta.url));
  const run = spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-reporter=spec", file], {
    encoding: "utf8",
    timeout: 120_000,
  });
  expect(run.stderr + run.stdout).toMatch(/# fail 0|ℹ fail 0/);
  expect(run.stdout).toMatch(/ℹ pass [1-9]/);
  expect(run.status).toBe(0);
});
