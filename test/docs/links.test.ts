/**
 * Every relative link of README.md and docs/*.md leads somewhere: the file exists and, for `page.md#section`, the
 * page has a heading with that anchor as GitHub makes it. A heading renamed on one page broke the links of others
 * without a word (nothing checked them).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const pages = [
  "README.md",
  ...readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

/** The lines of a page outside fenced code blocks (CommonMark §4.5), with their 1-based numbers. */
function prose(markdown: string): [number, string][] {
  const lines: [number, string][] = [];
  let fence: string | undefined;
  markdown.split("\n").forEach((line, index) => {
    const marker = /^ *(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined && marker !== undefined) fence = marker;
    else if (fence !== undefined && marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) {
      if (/^ *(`{3,}|~{3,})\s*$/.test(line)) fence = undefined;
    } else if (fence === undefined) lines.push([index + 1, line]);
  });
  return lines;
}

/**
 * The anchors GitHub gives a page's headings: the text lower-cased, inline code marks and punctuation dropped
 * (letters, digits, `-` and `_` kept), each space a `-`; a repeated anchor gets `-1`, `-2`, ….
 */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, line] of prose(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The relative links of one page that lead nowhere, as `page:line target`. */
function brokenLinks(page: string, read: (path: string) => string | undefined): string[] {
  const markdown = read(page);
  if (markdown === undefined) throw new Error(`no page ${page}`);
  const broken: string[] = [];
  for (const [number, line] of prose(markdown)) {
    // Inline code is no link: `[a](b)` in backticks is shown as written.
    for (const match of line.replace(/`[^`]*`/g, "").matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1] as string;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const [path, anchor] = target.split("#") as [string, string | undefined];
      const file = path === "" ? page : join(dirname(page), path);
      const text = read(file);
      if (text === undefined) broken.push(`${page}:${number} ${target} (no file ${file})`);
      else if (anchor !== undefined && file.endsWith(".md") && !anchorsOf(text).has(anchor)) {
        broken.push(`${page}:${number} ${target} (no heading with that anchor in ${file})`);
      }
    }
  }
  return broken;
}

const fromDisk = (path: string): string | undefined => {
  const file = join(root, path);
  if (!existsSync(file)) return undefined;
  return file.endsWith(".md") ? readFileSync(file, "utf8") : "";
};

describe("the documentation's links", () => {
  it(`lead to a file and a heading that exist (${pages.length} pages)`, () => {
    expect(pages.flatMap((page) => brokenLinks(relative(root, join(root, page)), fromDisk))).toEqual([]);
  });

  describe("the check itself", () => {
    const site: Record<string, string> = {
      "docs/a.md": [
        "# Page A",
        "## Express — `rest-webhooks/express`",
        "## Giving up on work: `signal`",
        "## Notes",
        "## Notes",
        "```md",
        "## Inside a fence",
        "[hidden](b.md#nowhere)",
        "```",
      ].join("\n"),
      "docs/b.md": [
        "[ok](a.md#express--rest-webhooksexpress) [ok](a.md#giving-up-on-work-signal) [ok](a.md#notes-1)",
        "[gone](a.md#inside-a-fence) [missing](c.md) [self](#nothing) [web](https://example.com/#x) `[code](c.md)`",
        "[up](../README.md#setup)",
      ].join("\n"),
      "README.md": "# Readme\n## Set up\n",
    };
    const read = (path: string) => site[path];

    it("follows GitHub's anchors and skips fenced blocks, inline code and absolute URLs", () => {
      expect(brokenLinks("docs/b.md", read)).toEqual([
        "docs/b.md:2 a.md#inside-a-fence (no heading with that anchor in docs/a.md)",
        "docs/b.md:2 c.md (no file docs/c.md)",
        "docs/b.md:2 #nothing (no heading with that anchor in docs/b.md)",
        "docs/b.md:3 ../README.md#setup (no heading with that anchor in README.md)",
      ]);
      expect(brokenLinks("docs/a.md", read)).toEqual([]);
    });
  });
});
