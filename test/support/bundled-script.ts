/**
 * A TypeScript entry compiled once into one ES module that plain `node` starts, for tests that start the same script
 * again and again (the crash tests restart the shop a dozen times). Under `node --import tsx` every start compiles
 * each of the script's modules anew: a second or more per start on a loaded 2-core machine, against a few hundred
 * milliseconds for the bundle. The same esbuild compiles it, with what tsx sets that code can observe (`keepNames`)
 * and the project's `paths` (rest-webhooks → src, tsconfig.json); packages stay imports, resolved from node_modules.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** Where {@link bundleScript} writes its bundles. */
export const BUNDLE_CACHE = join(root, "node_modules", ".cache", "rest-webhooks-tests");

/** A bundled script: its file, for `spawn(process.execPath, [file])`, and how to remove it. */
export interface BundledScript {
  readonly file: string;
  remove(): void;
}

/**
 * Bundles `entry` (a TypeScript file) into a fresh directory under node_modules/.cache, so that the packages it
 * imports resolve from the project's node_modules as they do for the entry itself.
 */
export async function bundleScript(entry: string, options: BundleOptions = {}): Promise<BundledScript> {
  mkdirSync(BUNDLE_CACHE, { recursive: true });
  // The pid in the name lets the global teardown tell a dead worker's bundles from those of a run still going.
  const dir = mkdtempSync(join(BUNDLE_CACHE, `bundle-${process.pid}-`));
  const name = basename(entry).replace(/\.ts$/, "");
  await build({
    entryPoints: [entry],
    outdir: dir,
    entryNames: "[name]",
    outExtension: { ".js": ".mjs" },
    splitting: options.splitting ?? false,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    tsconfig: join(root, "tsconfig.json"),
    keepNames: true,
    // No source map: node would need --enable-source-maps, which costs each start about a third more. A stack from
    // the child names the bundle's lines, and its functions by their own names (keepNames).
    logLevel: "silent",
  });
  return { file: join(dir, `${name}.mjs`), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** How {@link bundleScript} bundles. */
export interface BundleOptions {
  /**
   * Each dynamic `import()` in a chunk of its own, loaded only when reached, as under tsx and in the built CLI
   * (tsup's `splitting`: `check` and fast-check load only for that command). Without it they join the one file.
   */
  splitting?: boolean;
}

/**
 * {@link bundleScript} for scripts that tests start again and again: bundled on the first call only (a worker that
 * never starts it pays nothing), the same file after, for every test file the worker runs. The suite runs test files
 * in shared workers (vitest.config.ts: `isolate: false`), where a module that test files import is evaluated once,
 * so the bundle lives as long as the worker: removed when it exits, and the whole cache directory by the suite's
 * global teardown (test/support/bundle-cache-cleanup.ts) once their worker is gone, since vitest may kill it.
 */
export function bundledOnce(entry: string, options: BundleOptions = {}): () => Promise<string> {
  let bundled: Promise<BundledScript> | undefined;
  return async () => {
    bundled ??= bundleScript(entry, options).then((script) => {
      process.once("exit", () => script.remove());
      return script;
    });
    return (await bundled).file;
  };
}
