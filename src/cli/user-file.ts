import { readFile } from "node:fs/promises";
import { UsageError } from "./output";

// The usual reasons in words; any other error keeps node's own message.
const REASONS: Readonly<Record<string, string>> = {
  ENOENT: "no such file",
  EISDIR: "it is a directory",
  EACCES: "permission denied",
  EPERM: "permission denied",
};

/**
 * Reads a file the user named on the command line. An unreadable one is misuse (exit 2, docs/cli.md), so the
 * failure is a {@link UsageError} saying which file and why, never a stack trace.
 * @param path The path as given.
 * @param what What the file is for, e.g. "the capture (--file)".
 * @example const bytes = await readUserFile(values.file, "the capture (--file)");
 */
export async function readUserFile(path: string, what: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const reason = (typeof code === "string" ? REASONS[code] : undefined) ?? (error as Error).message;
    throw new UsageError(`cannot read ${what} ${JSON.stringify(path)}: ${reason}`, { cause: error });
  }
}

/**
 * Reads a text file the user named (JSON: `--data @file`, `--openapi`) as UTF-8, without one byte order mark at its
 * start: RFC 8259 §8.1 lets a parser ignore it, and editors on Windows put it before saved JSON.
 * @example const text = await readUserText(values.openapi, "the OpenAPI document");
 */
export async function readUserText(path: string, what: string): Promise<string> {
  return (await readUserFile(path, what)).toString("utf8").replace(/^\uFEFF/, "");
}
