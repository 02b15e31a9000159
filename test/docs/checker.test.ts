/** The docs check itself: it finds the blocks, locates a compile error on its markdown line, and passes good code. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkSnippets, extractSnippets, runSnippet, snippetFile, unclosedFence } from "./snippets";

const root = fileURLToPath(new URL("../../", import.meta.url));
const dir = join(root, ".doc-snippets", "checker");

const markdown = [
  "# A page", // 1
  "", // 2
  "```ts", // 3
  'import { json } from "rest-webhooks/http";', // 4
  "export const ok = json(200, { ok: true });", // 5
  "```", // 6
  "", // 7
  "```sh", // 8
  "```ts inside a shell block is not a block", // 9
  "```", // 10
  "", // 11
  "```ts runnable", // 12
  'import { json } from "rest-webhooks/http";', // 13
  "const n: number = json(200, {}).status;", // 14
  "const broken: string = n; // a deliberate error", // 15
  "```", // 16
  "", // 17
  "```typescript", // 18
  "export const answer = undeclared + 1; // a name never imported", // 19
  "```", // 20
].join("\n");

describe("the docs checker", () => {
  const snippets = extractSnippets("docs/page.md", markdown);

  it("extracts ts and typescript blocks with their first line, and skips other fences whole", () => {
    expect(snippets.map((s) => [s.line, s.runnable])).toEqual([
      [4, false],
      [13, true],
      [19, false],
    ]);
  });

  it("fails a deliberately broken snippet, at its line in the markdown, and passes the good one", () => {
    const errors = checkSnippets(root, dir, snippets);
    expect(errors.map((e) => `${e.doc}:${e.line} ${e.message.slice(0, 6)}`)).toEqual([
      "docs/page.md:15 TS2322",
      "docs/page.md:19 TS2304",
    ]);
  });

  it("passes when every block compiles", () => {
    expect(checkSnippets(root, dir, snippets.slice(0, 1))).toEqual([]);
  });

  // A ````sh block closed by ``` stays open (CommonMark §4.5) and swallowed the page's TypeScript without a word.
  it("finds a fence left open, which hides the blocks after it", () => {
    const open = ["````sh", "npm test", "```", "", "```ts", "export const hidden: number = 'text';", "```"].join("\n");
    expect(extractSnippets("docs/open.md", open)).toEqual([]);
    expect(unclosedFence(open)).toBe(1);
    expect(unclosedFence(markdown)).toBeUndefined();
    expect(unclosedFence(`${markdown}\n\n\`\`\`sh\nnpm start\n`)).toBe(22);
  });

  // A test filter that left the compile check out ran whatever file an earlier run had left.
  it("runs a runnable block from its text, never from a file an earlier run left", { timeout: 60_000 }, async () => {
    const [good] = extractSnippets("docs/run.md", "```ts runnable\nconsole.log('fresh');\n```");
    if (good === undefined) throw new Error("no block");
    mkdirSync(dir, { recursive: true });
    writeFileSync(snippetFile(dir, good), "throw new Error('a stale copy');\nexport {};\n");
    const run = await runSnippet(root, dir, good);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain("fresh");
  });
});
