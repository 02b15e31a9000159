/**
 * Every runtime export of a public subpath (package.json "exports") is named on some docs/*.md page: an export no
 * page names is one a reader cannot find (compilePolicies, gcraLimit, parseTraceparent, splitTarget … were exported
 * without a word). Named means the name appears in code spans or text as a whole word.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8")) as { exports: Record<string, unknown> };
const docs = readdirSync(`${root}docs`)
  .filter((file) => file.endsWith(".md"))
  .map((file) => readFileSync(`${root}docs/${file}`, "utf8"))
  .join("\n");
const words = new Set(docs.match(/[A-Za-z_$][A-Za-z0-9_$]*/g) ?? []);
const subpaths = Object.keys(pkg.exports).filter((subpath) => subpath !== "./package.json");
const source = (subpath: string) => `../../src/${subpath === "." ? "index" : `${subpath.slice(2)}/index`}.ts`;

describe("docs/*.md name every public export", () => {
  it.each(subpaths)("%s", async (subpath) => {
    const module = (await import(source(subpath))) as Record<string, unknown>;
    expect(Object.keys(module).filter((name) => !words.has(name))).toEqual([]);
  });
});
