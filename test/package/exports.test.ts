import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  exports: Record<string, unknown>;
  sideEffects?: boolean;
};
const subpaths = Object.keys(pkg.exports).filter((subpath) => subpath !== "./package.json");
const base = (subpath: string) => (subpath === "." ? "index" : `${subpath.slice(2)}/index`);

function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter(
      (entry) => entry.isFile() && keep(entry.name) && !join(entry.parentPath, entry.name).includes("node_modules"),
    )
    .map((entry) => join(entry.parentPath, entry.name));
}

/** Every `rest-webhooks` or `rest-webhooks/<subpath>` module specifier quoted in a file. */
function importPaths(text: string): string[] {
  return [...text.matchAll(/["'`](rest-webhooks(?:\/[A-Za-z0-9_\-./]+)?)["'`]/g)].map((match) => match[1] as string);
}

describe("package exports", () => {
  it("is side-effect free", () => {
    expect(pkg.sideEffects).toBe(false);
  });

  describe.each(subpaths)("%s", (subpath) => {
    it(`has its source at src/${base(subpath)}.ts`, () => {
      expect(existsSync(join(root, "src", `${base(subpath)}.ts`))).toBe(true);
    });

    it("has import and require conditions, each with types first", () => {
      const entry = pkg.exports[subpath] as Record<string, Record<string, string>>;
      expect(entry).toStrictEqual({
        import: { types: `./dist/${base(subpath)}.d.ts`, default: `./dist/${base(subpath)}.js` },
        require: { types: `./dist/${base(subpath)}.d.cts`, default: `./dist/${base(subpath)}.cjs` },
      });
      expect(Object.keys(entry.import ?? {})[0]).toBe("types");
      expect(Object.keys(entry.require ?? {})[0]).toBe("types");
    });
  });

  it("exports ./package.json", () => {
    expect(pkg.exports["./package.json"]).toBe("./package.json");
  });

  const documents = [
    join(root, "README.md"),
    ...filesUnder(join(root, "docs"), (name) => name.endsWith(".md")),
    ...filesUnder(join(root, "examples"), (name) => name.endsWith(".ts")),
  ].filter((file) => existsSync(file));

  it("finds the documents to check", () => {
    expect(documents).toContain(join(root, "README.md"));
  });

  it("names only exported subpaths in README.md, docs/ and examples/", () => {
    const unknown: string[] = [];
    for (const file of documents) {
      for (const specifier of importPaths(readFileSync(file, "utf8"))) {
        const subpath = specifier === "rest-webhooks" ? "." : `./${specifier.slice("rest-webhooks/".length)}`;
        if (!Object.hasOwn(pkg.exports, subpath)) unknown.push(`${relative(root, file)}: ${specifier}`);
      }
    }
    expect(unknown).toStrictEqual([]);
  });

  it("recognises import specifiers in prose and code", () => {
    expect(
      importPaths(`import { adapt } from "rest-webhooks/node";\nimport x from 'rest-webhooks'; \`rest-webhooks/a/b\``),
    ).toStrictEqual(["rest-webhooks/node", "rest-webhooks", "rest-webhooks/a/b"]);
  });
});
