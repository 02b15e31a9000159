import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = fileURLToPath(new URL("./src/", import.meta.url));

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
    globalSetup: ["test/support/pglite-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // VITEST_JSON: where the counts go (.ci/run's runs on other Node versions keep the Node 20 report intact).
    reporters: process.env.CI
      ? ["default", ["json", { outputFile: process.env.VITEST_JSON ?? "reports/vitest.json" }]]
      : ["default"],
    typecheck: { enabled: true, include: ["test/**/*.test-d.ts"], tsconfig: "./tsconfig.json" },
  },
});
