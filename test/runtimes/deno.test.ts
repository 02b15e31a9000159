/** The Fetch adapter's contract and a signed webhook round trip, on Deno (vitest itself run by Deno). */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { root, run, runtimeBinary } from "../support/runtimes";
import { checkExampleServer } from "./serve-example";

interface Report {
  numPassedTests: number;
  numFailedTests: number;
  testResults: Array<{ assertionResults: Array<{ fullName: string; status: string }> }>;
}

describe("on Deno", () => {
  it("passes the Fetch adapter contract and delivers a signed webhook over Deno.serve", async () => {
    const deno = runtimeBinary("deno");
    const dir = mkdtempSync(join(tmpdir(), "rest-webhooks-deno-"));
    try {
      const report = join(dir, "report.json");
      const { status, output } = await run(
        deno,
        ["run", "-A", "node_modules/vitest/vitest.mjs", "run", "--config", "test/runtimes/vitest.runtime.config.ts"],
        { RUNTIME_REPORT: report },
      );
      expect(status, output).toBe(0);
      const result = JSON.parse(readFileSync(report, "utf8")) as Report;
      expect(result.numFailedTests).toBe(0);
      expect(result.numPassedTests).toBeGreaterThan(30);
      const passed = result.testResults.flatMap((file) =>
        file.assertionResults.filter((test) => test.status === "passed").map((test) => test.fullName),
      );
      expect(passed).toContain("on deno really runs on Bun or Deno");
      expect(passed).toContain("on deno delivers a signed webhook end to end over the runtime's own HTTP server");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("runs examples/frameworks/deno.ts as written: the API and a signed webhook over Deno.serve", {
    timeout: 60_000,
  }, async () => {
    // `rest-webhooks/*` resolved to the sources, where a user's Deno resolves the installed package (and this
    // repository's, after `npm run build`, dist/).
    const dir = mkdtempSync(join(tmpdir(), "rest-webhooks-deno-"));
    try {
      const src = pathToFileURL(join(root, "src")).href;
      const map = join(dir, "import-map.json");
      writeFileSync(
        map,
        JSON.stringify({ imports: { "rest-webhooks": `${src}/index.ts`, "rest-webhooks/": `${src}/` } }),
      );
      const args = ["run", "-A", "--unstable-sloppy-imports", `--import-map=${map}`, "examples/frameworks/deno.ts"];
      await checkExampleServer(runtimeBinary("deno"), args);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
