// `node --import ./bench/support/as-built-loader.mjs file.ts`: runs the benches' TypeScript compiled as `npm run build`
// compiles the package (tsup: esbuild, target node20), not as tsx compiles it. tsx turns on esbuild's `keepNames`,
// which wraps every named function in a call to `__name` (an `Object.defineProperty`) each time it is created: code
// that makes named closures per request paid for it in the benches and not in dist (bench/consumer's memory inbox,
// 1 KiB: 6.5 % of the server's CPU in `collectBody`'s five listeners). The peers' code in node_modules is not
// compiled at all, so only ours paid. This file is both the `--import` module (it registers itself) and the hooks.
// Each output is kept in node_modules/.cache/rest-webhooks-as-built, under a hash of everything that makes it (see
// `load`): a bench starts dozens of processes on the same modules, and only the first compiles each (test/bench's
// check runs spent most of their time starting esbuild and compiling the same hundred modules in every process).
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { createRequire, register } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { isMainThread, threadId } from "node:worker_threads";

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

const cache = new URL("node_modules/.cache/rest-webhooks-as-built/", root);
let esbuild;
/** What every output depends on besides its file: this loader (its esbuild options), esbuild's version, tsconfig. */
let compilation;

async function describeCompilation() {
  const esbuildPackage = createRequire(import.meta.url).resolve("esbuild/package.json");
  const [loader, esbuildVersion, tsconfig] = await Promise.all([
    readFile(new URL(import.meta.url), "utf8"),
    readFile(esbuildPackage, "utf8").then((text) => JSON.parse(text).version),
    readFile(new URL("tsconfig.json", root), "utf8"),
  ]);
  // The compiler options tsup hands esbuild (class fields as defined properties for ES2022, type-only imports dropped).
  const tsconfigRaw = { compilerOptions: JSON.parse(tsconfig).compilerOptions };
  const hash = createHash("sha256").update(loader).update("\0").update(esbuildVersion).update("\0").update(tsconfig);
  return { tsconfigRaw, hash };
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith("file:") || !/\.m?ts$/.test(new URL(url).pathname)) return nextLoad(url, context);
  compilation ??= describeCompilation();
  const { tsconfigRaw, hash } = await compilation;
  const path = fileURLToPath(url);
  const source = await readFile(path, "utf8");
  // Keyed by the source text itself, not its modification time: an edit can never be served a stale output.
  const key = hash.copy().update("\0").update(path).update("\0").update(source).digest("hex");
  const cached = new URL(`${key}.mjs`, cache);
  try {
    return { format: "module", source: await readFile(cached, "utf8"), shortCircuit: true };
  } catch (error) {
    if (error?.code !== "ENOENT") throw error;
  }
  esbuild ??= await import("esbuild");
  const { code } = await esbuild.transform(source, {
    loader: "ts",
    format: "esm",
    target: "node20",
    sourcefile: pathToFileURL(path).href,
    sourcemap: "inline",
    tsconfigRaw,
  });
  // Written aside and renamed into place: processes starting side by side never read a half-written output.
  await mkdir(cache, { recursive: true });
  const aside = new URL(`${key}.${process.pid}.${threadId}.tmp`, cache);
  await writeFile(aside, code);
  await rename(aside, cached);
  return { format: "module", source: code, shortCircuit: true };
}
