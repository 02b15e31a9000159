import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig } from "vitest/config";
import { collectSkipNotes, SkipSummaryReporter } from "./test/support/skip-summary.js";

const src = fileURLToPath(new URL("./src/", import.meta.url));

const SERVER_ONLY = process.env.DATABASE_URL ? [] : ["test/**/*.server.test.ts"];

export default defineConfig({
  resolve: {
    // The examples import the package by name, as a user would; tests resolve it to the sources.
    alias: [
      { find: /^rest-webhooks$/, replacement: `${src}index.ts` },
      { find: /^rest-webhooks\/(.*)$/, replacement: `${src}$1/index.ts` },
    ],
  },
  test: {
    include: ["test/**/*.test.ts"],
    // Files that need a PostgreSQL server (several processes on one database): only with DATABASE_URL.
    exclude: [...configDefaults.exclude, ...SERVER_ONLY],
    globalSetup: ["test/support/pglite-setup.ts", "test/support/bundle-cache-cleanup.ts"],
    // Vitest's default is one file at a time on 2 cores (cores - 1). The long files mostly wait on child processes,
    // PostgreSQL and timers, so two at a time overlap: on the 2-core CI machine the suite went from 601 s to 321 s.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Test files share their worker process and its module cache instead of each starting a fresh one: on the 2-core
    // machine the suite went from 558 s to about 370 s, a third of it having been spent starting workers and importing
    // the same modules again. What a file changes process-wide it restores itself (fake timers, stubbed env, globals of
    // OpenTelemetry); scripts bundled for child processes are bundled once per worker (test/support/bundled-script.ts).
    isolate: false,
    testTimeout: 30_000,
    // On CI a failing test runs once more; one that passes only then is listed as flaky at the end of the run.
    retry: process.env.CI ? 1 : 0,
    hookTimeout: 60_000,
    onConsoleLog: collectSkipNotes,
    // VITEST_JSON: where the counts go (.ci/run's runs on other Node versions keep the Node 20 report intact).
    reporters: [
      "default",
      new SkipSummaryReporter(
        SERVER_ONLY.map((glob) => `[server only] ${glob}: several processes on one database need DATABASE_URL`),
      ),
      ...(process.env.CI
        ? [
            ["json", { outputFile: process.env.VITEST_JSON ?? "reports/vitest.json" }] as [
              "json",
              { outputFile: string },
            ],
          ]
        : []),
    ],
    // The type tests (test/**/*.test-d.ts: expectTypeOf, @ts-expect-error) are checked by `npm run typecheck`, which
    // `npm test` runs first over tsconfig.json's whole `include` (test/ with them): a failing one fails it. Vitest's
    // own typecheck ran a second tsc over their closure beside the tests, about 35 s of CPU on the 2-core CI machine.
    // `npx vitest --typecheck` still runs them as named tests.
    typecheck: { enabled: false, include: ["test/**/*.test-d.ts"], tsconfig: "./tsconfig.json" },
  },
});
