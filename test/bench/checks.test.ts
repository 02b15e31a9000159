/**
 * The benchmark suites that compare answers before they time anything (bench/shop, bench/consumer, bench/adapters), run in their
 * check mode (BENCH_CHECK=1: the checks and one short round of load, no figures). A library change that makes a
 * contender answer differently, or that a load generator's requests no longer pass, fails here instead of in the next
 * `npm run bench`. Nothing here reads a time.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, it } from "vitest";
import { AS_BUILT } from "../../bench/support/as-built";

const root = fileURLToPath(new URL("../../", import.meta.url));

// `onFinished`: a test that timed out stops its suite, whose servers stop with it (they exit when the suite's process
// is gone), instead of leaving them to load the machine under the retry and the files that run next. (Not the
// context's `signal`: it stays aborted into the retry, which then failed at once.)
function runCheck(
  suite: string,
  onFinished: (stop: () => void) => void,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...AS_BUILT, `bench/${suite}/index.ts`], {
      cwd: root,
      env: { ...process.env, BENCH_CHECK: "1", BENCH_PIN: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    onFinished(() => child.kill());
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

// The three run side by side: each spends most of its time starting processes and waiting on them, and none times
// anything that another could disturb.
describe("the bench suites in check mode", () => {
  it.concurrent.for(["shop", "consumer", "adapters"])(
    "bench/%s checks every contender's answers, runs them under load, and prints no figures",
    { timeout: 120_000 },
    async (suite, { expect, onTestFinished }) => {
      const { code, output } = await runCheck(suite, onTestFinished);
      expect(output).not.toMatch(/Error/);
      expect(code).toBe(0);
      expect(output).toMatch(/^checked: /m);
      expect(output).not.toMatch(/^ratio: /m);
    },
  );
});
