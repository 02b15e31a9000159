/**
 * Every TypeScript block of README.md and docs/*.md compiles under strict options as a module of its own (its own
 * imports, nothing assumed), and every block marked `runnable` runs to completion. A doc that drifts from the code
 * fails here. The checker itself is tested in checker.test.ts.
 */
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkSnippets, snippetFile, snippetsOf } from "./snippets";

const root = fileURLToPath(new URL("../../", import.meta.url));
const dir = join(root, ".doc-snippets", "docs");
const docs = [
  "README.md",
  ...readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];
const snippets = snippetsOf(root, docs);

describe("the documentation's TypeScript", () => {
  it(`has blocks to check (${snippets.length} in ${docs.length} files)`, () => {
    expect(snippets.length).toBeGreaterThan(40);
  });

  it("compiles, block by block, under strict options", { timeout: 120_000 }, () => {
    const errors = checkSnippets(root, dir, snippets);
    expect(errors.map((e) => `${e.doc}:${e.line} ${e.message}`)).toEqual([]);
  });

  describe.each(snippets.filter((s) => s.runnable).map((s) => ({ ...s, name: `${s.doc}:${s.line}` })))(
    "runnable block $name",
    (snippet) => {
      it("runs to completion", { timeout: 60_000 }, () => {
        const run = spawnSync(process.execPath, ["--import", "tsx", snippetFile(dir, snippet)], {
          cwd: root,
          encoding: "utf8",
          timeout: 50_000,
          env: { ...process.env, NODE_ENV: "test" },
        });
        expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
      });
    },
  );
});
