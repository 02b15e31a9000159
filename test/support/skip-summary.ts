/**
 * What a run left out, said once: suites print `[skip] …` (a missing service) or `[server only] …` (needs a
 * PostgreSQL server) from every test worker; `onConsoleLog` keeps those lines out of the output, and the reporter
 * prints each distinct one at the end with the count of skipped tests per file (vitest's own summary counts them).
 */
import { relative } from "node:path";
import type { Reporter, TestModule } from "vitest/node";

const notes = new Set<string>();

/** vitest's `onConsoleLog`: swallows the skip notes (kept for the summary), lets everything else through. */
export function collectSkipNotes(log: string): false | undefined {
  const line = log.trim();
  if (line.startsWith("[skip]") || line.startsWith("[server only]")) {
    notes.add(line);
    return false;
  }
  return undefined;
}

/** Prints the skip summary after the run. */
export class SkipSummaryReporter implements Reporter {
  /** @param excluded notes on files left out by the configuration itself. */
  constructor(private readonly excluded: readonly string[] = []) {}

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    this.#flaky(testModules);
    const skipped: string[] = [];
    let total = 0;
    for (const module of testModules) {
      const count = [...module.children.allTests("skipped")].length;
      if (count === 0) continue;
      total += count;
      skipped.push(`  ${relative(process.cwd(), module.moduleId)}: ${count}`);
    }
    if (total === 0 && notes.size === 0 && this.excluded.length === 0) return;
    const lines = [`\nLeft out of this run: ${total} skipped test${total === 1 ? "" : "s"}`, ...skipped];
    for (const note of [...this.excluded, ...[...notes].sort()]) lines.push(`  ${note}`);
    process.stdout.write(`${lines.join("\n")}\n`);
  }

  // CI retries a failed test once (vitest.config.ts): one that passed only on its retry is named here, never hidden.
  #flaky(testModules: ReadonlyArray<TestModule>): void {
    const flaky: string[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests("passed")) {
        if (test.diagnostic()?.flaky) flaky.push(`  ${relative(process.cwd(), module.moduleId)} > ${test.fullName}`);
      }
    }
    if (flaky.length === 0) return;
    process.stdout.write(
      `\nFlaky: ${flaky.length} test${flaky.length === 1 ? "" : "s"} passed only on retry\n${flaky.join("\n")}\n`,
    );
  }
}
