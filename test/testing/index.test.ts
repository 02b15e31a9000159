/**
 * rest-webhooks/testing names every export (STYLE: no `export *`): a new export of a law or arbitrary module is a
 * decision made in src/testing/index.ts, not one that leaks through. The runtime list itself is checked in
 * test/package/subpath-exports.test.ts.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const src = fileURLToPath(new URL("../../src/testing/", import.meta.url));

describe("src/testing", () => {
  it("has no export *: every export is named", () => {
    const files = readdirSync(src, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".ts"));
    expect(files).toContain("index.ts");
    const star = files.filter((file) => /^export \* from/m.test(readFileSync(join(src, file), "utf8")));
    expect(star).toEqual([]);
  });
});
