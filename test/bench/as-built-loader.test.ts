/**
 * bench/support/as-built-loader.mjs, which every bench runs its TypeScript through: it must compile as `npm run build`
 * does (no `keepNames` wrappers, class fields as defined properties) and resolve what the sources import.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { AS_BUILT } from "../../bench/support/as-built";

const probe = fileURLToPath(new URL("./fixtures/as-built-probe.ts", import.meta.url));

it("compiles without keepNames and resolves extensionless imports and the package's own name", () => {
  const run = spawnSync(process.execPath, [...AS_BUILT, probe], { encoding: "utf8" });
  expect(run.stderr).toBe("");
  const printed = JSON.parse(run.stdout) as Record<string, unknown>;
  // tsx (keepNames) would give `const inner = __name(() => 1, "inner")`; V8 names the arrow itself.
  expect(printed.source).not.toContain("__name");
  expect(printed.name).toBe("inner");
  expect(printed.definedField).toBe(true);
  expect(printed.selfReference).toEqual(["function", true]);
  expect(printed.extensionless).toBe("W/");
});

it("fails the way node does for an import that does not exist", () => {
  const run = spawnSync(process.execPath, [...AS_BUILT, "--input-type=module", "-e", 'import "./no-such-file"'], {
    encoding: "utf8",
  });
  expect(run.status).not.toBe(0);
  expect(run.stderr).toContain("ERR_MODULE_NOT_FOUND");
});
