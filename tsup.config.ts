import { readFileSync } from "node:fs";
import { defineConfig, type Options } from "tsup";

// The exports map in package.json is the one list of subpaths: "./x/y" is built from src/x/y/index.ts.
const pkg = JSON.parse(readFileSync("./package.json", "utf8")) as {
  exports: Record<string, unknown>;
  bin: Record<string, string>;
};
const entry = Object.fromEntries(
  Object.keys(pkg.exports)
    .filter((subpath) => subpath !== "./package.json")
    .map((subpath) => {
      const name = subpath === "." ? "index" : `${subpath.slice(2)}/index`;
      return [name, `src/${name}.ts`];
    }),
);

/**
 * The `rest-webhooks` executable (package.json `bin`): ESM with a shebang, no types, in dist/cli with its chunks;
 * each build cleans only its own files.
 */
export const cliBuild: Options = {
  entry: { main: "src/cli/main.ts" },
  format: ["esm"],
  dts: false,
  clean: true,
  sourcemap: true,
  // `check` and fast-check (an optional peer) load in a chunk of their own, only when that command runs.
  splitting: true,
  target: "node20",
  outDir: "dist/cli",
  banner: { js: "#!/usr/bin/env node" },
};

export default defineConfig([
  {
    entry,
    format: ["esm", "cjs"],
    dts: true,
    clean: ["**/*", "!cli/**"],
    sourcemap: true,
    splitting: true,
    treeshake: true,
    target: "node20",
    outDir: "dist",
  },
  cliBuild,
]);
