/**
 * docs/testing.md against `rest-webhooks/testing`: its export table names every runtime export of the subpath, and its
 * table of laws gives each law the name `resourceLaws` and `consumerLaws` give it (the page says they are the same).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as testing from "../../src/testing/index";
import { LAW_NAMES } from "../../src/testing/laws/names";

const page = readFileSync(new URL("../../docs/testing.md", import.meta.url), "utf8");

/** The rows of the first table under a `## ` heading, each as its cells. */
function tableUnder(heading: string): string[][] {
  const start = page.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no section ${heading}`);
  const lines = page.slice(start).split("\n").slice(2);
  const first = lines.findIndex((line) => line.startsWith("|"));
  const rows: string[][] = [];
  for (const line of lines.slice(first)) {
    if (!line.startsWith("|")) break;
    rows.push(
      line
        .slice(1, -1)
        .split(" | ")
        .map((cell) => cell.trim()),
    );
  }
  return rows.slice(2); // the header row and the delimiter row
}

describe("docs/testing.md", () => {
  // Transcript and formatHttpDateAs were exported without a word on the page.
  it("names every runtime export of rest-webhooks/testing in its table of exports", () => {
    const named = new Set(
      tableUnder("What you get").flatMap(([cell]) =>
        [...(cell ?? "").matchAll(/`([A-Za-z0-9]+)/g)].map((m) => m[1] as string),
      ),
    );
    expect(Object.keys(testing).filter((name) => !named.has(name))).toEqual([]);
    expect([...named].filter((name) => !(name in testing))).toEqual([]);
  });

  it("gives each law the name the kit gives it, and lists them all", () => {
    const documented = tableUnder("The laws").map(([cell]) => cell);
    expect([...documented].sort()).toEqual(Object.values(LAW_NAMES).sort());
  });
});
