// `node --import ./bench/support/as-built-loader.mjs file.ts`: runs the benches' TypeScript compiled as `npm run build`
// compiles the package (tsup: esbuild, target node20), not as tsx compiles it. tsx turns on esbuild's `keepNames`,
// which wraps every named function in a call to `__name` (an `Object.defineProperty`) each time it is created: code
// that makes named closures per request paid for it in the benches and not in dist (bench/consumer's memory inbox,
// 1 KiB: 6.5 % of the server's CPU in `collectBody`'s five listeners). The peers' code in node_modules is not
// compiled at all, so only ours paid. This file is both the `--import` module (it registers itself) and the hooks.
import { readFile } from "node:fs/promises";
import { register } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { isMainThread } from "node:worker_threads";

if (isMainThread) register(import.meta.url);

const root = new URL("../../", import.meta.url);

// tsconfig.json's `paths`: the package's own name resolves to its sources, as in the type check and the tests.
function selfReference(specifier) {
  if (specifier === "rest-webhooks") return new URL("src/index.ts", root).href;
  if (specifier.startsWith("rest-webhooks/")) return new URL(`src/${specifier.slice(14)}/index.ts`, root).href;
  return undefined;
}

const notFound = (error) => error?.code === "ERR_MODULE_NOT_FOUND" || error?.code === "ERR_UNSUPPORTED_DIR_IMPORT";

export async function resolve(specifier, context, nextResolve) {
  const own = selfReference(specifier);
  if (own !== undefined) return { url: own, shortCircuit: true };
  try {
    return await nextResolve(specifier, context);
  } catch (error) {
    // The sources import without extensions (moduleResolution "Bundler"): a file, then a folder's index.
    if (!notFound(error) || !(specifier.startsWith(".") || specifier.startsWith("/"))) throw error;
    const base = specifier.endsWith(".js") ? specifier.slice(0, -3) : specifier;
    for (const candidate of [`${base}.ts`, `${base}/index.ts`]) {
      try {
        return await nextResolve(candidate, context);
      } catch (next) {
        if (!notFound(next)) throw next;
      }
    }
    throw error;
  }
}

let esbuild;
// The compiler options tsup hands esbuild (class fields as defined properties for ES2022, type-only imports dropped).
let tsconfigRaw;

export async function load(url, context, nextLoad) {
  if (!url.startsWith("file:") || !/\.m?ts$/.test(new URL(url).pathname)) return nextLoad(url, context);
  esbuild ??= await import("esbuild");
  tsconfigRaw ??= {
    compilerOptions: JSON.parse(await readFile(new URL("tsconfig.json", root), "utf8")).compilerOptions,
  };
  const path = fileURLToPath(url);
  const { code } = await esbuild.transform(await readFile(path, "utf8"), {
    loader: "ts",
    format: "esm",
    target: "node20",
    sourcefile: pathToFileURL(path).href,
    sourcemap: "inline",
    tsconfigRaw,
  });
  return { format: "module", source: code, shortCircuit: true };
}
