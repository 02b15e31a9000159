import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = fileURLToPath(new URL("../../src/", import.meta.url));

/** Vitest under Deno (test/runtimes/deno.test.ts): only the runtime suite, no database set-up, no type tests. */
export default defineConfig({
  root: fileURLToPath(new URL("../../", import.meta.url)),
  resolve: {
    alias: [
      { find: /^rest-webhooks$/, replacement: `${src}index.ts` },
      { find: /^rest-webhooks\/(.*)$/, replacement: `${src}$1/index.ts` },
    ],
  },
  test: {
    include: ["test/runtimes/fetch-runtime.suite.ts"],
    testTimeout: 30_000,
    reporters: ["default", ["json", { outputFile: process.env.RUNTIME_REPORT ?? "reports/deno.json" }]],
  },
});
