import { readFileSync } from "node:fs";
import { defineConfig } from "tsup";

// The exports map in package.json is the one list of subpaths: "./x/y" is built from src/x/y/index.ts.
const pkg = JSON.parse(readFileSync("./package.json", "utf8")) as { exports: Record<string, unknown> };
const entry = Object.fromEntries(
  Object.keys(pkg.exports)
    .filter((subpath) => subpath !== "./package.json")
    .map((subpath) => {
      const name = subpath === "." ? "index" : `${subpath.slice(2)}/index`;
      return [name, `src/${name}.ts`];
    }),
);

export default defineConfig({
  entry,
  format: ["esm", "cjs"],
  dts: true,
  clean: true,
  sourcemap: true,
  splitting: true,
  treeshake: true,
  target: "node20",
  outDir: "dist",
});
