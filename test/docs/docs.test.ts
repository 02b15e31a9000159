/**
 * Every TypeScript block of README.md and docs/*.md compiles under strict options as a module of its own (its own
 * imports, nothing assumed), and every block marked `runnable` runs to completion. A doc that drifts from the code
 * fails here. The checker itself is tested in checker.test.ts.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkSnippets, runSnippet, snippetsOf, unclosedFence } from "./snippets";

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

  it("has no fence left open, which would hide every block after it", () => {
    const open = docs.flatMap((doc) => {
      const line = unclosedFence(readFileSync(join(root, doc), "utf8"));
      return line === undefined ? [] : [`${doc}:${line}`];
    });
    expect(open).toEqual([]);
  });

  it("compiles, block by block, under strict options", { timeout: 120_000 }, () => {
    const errors = checkSnippets(root, dir, snippets);
    expect(errors.map((e) => `${e.doc}:${e.line} ${e.message}`)).toEqual([]);
  });

  // Each block in a process of its own, side by side: most of a run is starting node and importing.
  it.concurrent.for(snippets.filter((s) => s.runnable).map((s) => ({ ...s, name: `${s.doc}:${s.line}` })))(
    "runnable block $name runs to completion",
    { timeout: 60_000 },
    async (snippet, { expect }) => {
      const run = await runSnippet(root, dir, snippet);
      expect(run.status, `${run.signal ?? ""}\n${run.stdout}\n${run.stderr}`).toBe(0);
    },
  );
});
