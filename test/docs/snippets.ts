/**
 * The docs check: every TypeScript block of README.md and docs/*.md (```ts or ```typescript) is a module of its own,
 * type-checked under the project's strict options with `rest-webhooks/*` resolved to the sources, as a reader who
 * copies that one block would compile it. Blocks whose info string says `runnable` also run, against the in-memory
 * stores, and must exit 0.
 */
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { bundleScript } from "../support/bundled-script";

/** One fenced TypeScript block. */
export interface Snippet {
  /** The markdown file, relative to the root. */
  readonly doc: string;
  /** The line of the block's first code line in the markdown file (1-based). */
  readonly line: number;
  readonly code: string;
  /** Whether the info string marks it `runnable`. */
  readonly runnable: boolean;
}

/** A compile error, located in the markdown file. */
export interface SnippetDiagnostic {
  readonly doc: string;
  readonly line: number;
  readonly message: string;
}

// Indented too: a block inside a list item (CommonMark §5.2) is a block of the docs like any other.
const FENCE = /^( *)(`{3,}|~{3,})\s*(ts|typescript)\b(.*)$/;

// CommonMark §4.5: a closing fence is at least as long as the opening one, of the same character, with no info string.
function closes(line: string, fence: string): boolean {
  const match = /^ *(`{3,}|~{3,})\s*$/.exec(line);
  return match !== null && (match[1] as string)[0] === fence[0] && (match[1] as string).length >= fence.length;
}

/**
 * The 1-based line of the first fenced block of one markdown text that is never closed, or `undefined`. CommonMark
 * §4.5 runs such a block to the end of the document: every TypeScript block after it would be prose inside a code
 * block, shown as such and skipped by the check without a word.
 */
export function unclosedFence(markdown: string): number | undefined {
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^ *(`{3,}|~{3,})/.exec(lines[i] as string);
    if (open === null) continue;
    const start = i + 1;
    for (i++; i < lines.length && !closes(lines[i] as string, open[1] as string); i++);
    if (i === lines.length) return start;
  }
  return undefined;
}

/** Every TypeScript block of one markdown text (CommonMark fenced code blocks, §4.5). */
export function extractSnippets(doc: string, markdown: string): Snippet[] {
  const lines = markdown.split("\n");
  const snippets: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] as string);
    if (open === null) {
      // Skip other fenced blocks whole, so a ```ts inside them is not taken for a block.
      const other = /^ *(`{3,}|~{3,})/.exec(lines[i] as string);
      if (other) for (i++; i < lines.length && !closes(lines[i] as string, other[1] as string); i++);
      continue;
    }
    const body: string[] = [];
    const start = i + 2;
    // The fence's own indentation is the block's (CommonMark §4.5), taken off each line that has it.
    const indent = open[1] as string;
    for (i++; i < lines.length && !closes(lines[i] as string, open[2] as string); i++) {
      const line = lines[i] as string;
      body.push(line.startsWith(indent) ? line.slice(indent.length) : line.trimStart());
    }
    snippets.push({ doc, line: start, code: body.join("\n"), runnable: /\brunnable\b/.test(open[4] ?? "") });
  }
  return snippets;
}

/** Where a snippet is written: one file per block, named after its place in the docs. */
export function snippetFile(dir: string, snippet: Snippet): string {
  return join(dir, `${snippet.doc.replace(/[^A-Za-z0-9]+/g, "_")}_L${snippet.line}.ts`);
}

/** Writes one snippet as the module it is checked and run as, and returns its path. */
export function writeSnippet(dir: string, snippet: Snippet): string {
  const file = snippetFile(dir, snippet);
  mkdirSync(dir, { recursive: true });
  // `export {}` makes a block without imports a module too (its own scope, top-level await).
  writeFileSync(file, `${snippet.code}\nexport {};\n`);
  return file;
}

/** How a run of a snippet ended, with what it printed. */
export interface SnippetRun {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs one snippet to completion as a reader would, with node from the root, from a file written afresh: never a
 * copy left by an earlier run, which a test filter leaving out the compile check would otherwise run in its place.
 * The block is compiled by the esbuild that tsx uses, once into one module (bundleScript): under `node --import tsx`
 * each start compiled every source module the block reaches anew, seconds per block on a loaded machine.
 */
export async function runSnippet(root: string, dir: string, snippet: Snippet): Promise<SnippetRun> {
  const bundled = await bundleScript(writeSnippet(dir, snippet));
  try {
    return await new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [bundled.file], {
        cwd: root,
        timeout: 50_000,
        env: { ...process.env, NODE_ENV: "test" },
      });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
      child.on("error", reject);
      child.on("close", (status, signal) => resolve({ status, signal, stdout, stderr }));
    });
  } finally {
    bundled.remove();
  }
}

/** The options the snippets compile under: the project's strict ones (tsconfig.json), `rest-webhooks/*` → src. */
function compilerOptions(root: string): ts.CompilerOptions {
  return {
    target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2023.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"],
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    strict: true,
    noUncheckedIndexedAccess: true,
    isolatedModules: true,
    verbatimModuleSyntax: true,
    esModuleInterop: true,
    skipLibCheck: true,
    noEmit: true,
    types: ["node"],
    baseUrl: root,
    paths: { "rest-webhooks": ["./src/index.ts"], "rest-webhooks/*": ["./src/*/index.ts"] },
  };
}

// Parsed files by path, for the next check in the same process: a file whose text is unchanged is not parsed (nor
// bound) again, as the language service shares them between programs. Most of a check is the lib, @types/node and
// the packages the blocks import, the same from one check to the next.
const parsed = new Map<string, ts.SourceFile>();

function cachingHost(options: ts.CompilerOptions): ts.CompilerHost {
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    const text = host.readFile(fileName);
    const known = parsed.get(fileName);
    if (text !== undefined && known !== undefined && known.text === text) return known;
    const file = getSourceFile(fileName, languageVersion, onError, shouldCreate);
    if (file !== undefined) parsed.set(fileName, file);
    return file;
  };
  return host;
}

/**
 * Writes every snippet under `dir` (inside the project, so `node_modules` resolves) and type-checks them together,
 * each a module of its own, in one program. Returns the errors, located in the markdown.
 */
export function checkSnippets(root: string, dir: string, snippets: readonly Snippet[]): SnippetDiagnostic[] {
  rmSync(dir, { recursive: true, force: true });
  const files = new Map<string, Snippet>();
  for (const snippet of snippets) files.set(writeSnippet(dir, snippet), snippet);
  const options = compilerOptions(root);
  const program = ts.createProgram([...files.keys()], options, cachingHost(options));
  const found: SnippetDiagnostic[] = [];
  for (const [file, snippet] of files) {
    const source = program.getSourceFile(file);
    if (source === undefined) continue;
    for (const diagnostic of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
      const at = diagnostic.start === undefined ? 0 : source.getLineAndCharacterOfPosition(diagnostic.start).line;
      found.push({
        doc: snippet.doc,
        line: snippet.line + at,
        message: `TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`,
      });
    }
  }
  return found;
}

/** Every snippet of the given markdown files (paths relative to the root). */
export function snippetsOf(root: string, docs: readonly string[]): Snippet[] {
  return docs.flatMap((doc) => extractSnippets(relative(root, join(root, doc)), readFileSync(join(root, doc), "utf8")));
}
