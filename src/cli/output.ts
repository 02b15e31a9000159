/**
 * The CLI's output: colour only on a TTY (and never with `NO_COLOR`, https://no-color.org), one JSON document for
 * scripts with `--json`, progress on stderr, and the exit codes CI reads.
 */

/** Exit codes: 0 success, 1 the check failed (a law, a signature, a delivery), 2 misuse (bad arguments, unreadable input). */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** A misuse of the command line: printed with the command's usage hint, exit code 2. */
export class UsageError extends Error {
  readonly code = "cli_usage";
  override readonly name = "UsageError";
}

/** Where a command writes, and whether it may colour. */
export interface Output {
  readonly json: boolean;
  readonly colour: boolean;
  /** A line of the human report on stdout (silent with `--json`). */
  line(text?: string): void;
  /** Progress and notes on stderr (silent with `--json` unless it is a TTY). */
  progress(text: string): void;
  /** The one JSON document of a `--json` run, on stdout. */
  result(value: unknown): void;
  /** A usage text on stdout, `--json` or not: asking for help asks for text, and silence would look like a hang. */
  help(text: string): void;
  green(text: string): string;
  red(text: string): string;
  yellow(text: string): string;
  dim(text: string): string;
  bold(text: string): string;
}

/** Whether colour is wanted on this stream: a TTY, `NO_COLOR` unset or empty, `TERM` not `dumb`. */
export function wantsColour(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "" && env.FORCE_COLOR !== "0") return true;
  return stream.isTTY === true && env.TERM !== "dumb";
}

function paint(on: boolean, open: number, close: number): (text: string) => string {
  return on ? (text) => `\u001b[${open}m${text}\u001b[${close}m` : (text) => text;
}

/** The output of one command run. */
export function createOutput(json: boolean): Output {
  const colour = !json && wantsColour(process.stdout);
  const errColour = wantsColour(process.stderr);
  const dimErr = paint(errColour, 2, 22);
  return {
    json,
    colour,
    line(text = "") {
      if (!json) process.stdout.write(`${text}\n`);
    },
    progress(text) {
      if (!json || process.stderr.isTTY) process.stderr.write(`${dimErr(text)}\n`);
    },
    result(value) {
      process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    },
    help(text) {
      process.stdout.write(`${text}\n`);
    },
    green: paint(colour, 32, 39),
    red: paint(colour, 31, 39),
    yellow: paint(colour, 33, 39),
    dim: paint(colour, 2, 22),
    bold: paint(colour, 1, 22),
  };
}

/** The first `limit` characters of a body, marked when cut. */
export function bodyStart(text: string, limit = 500): string {
  return text.length > limit ? `${text.slice(0, limit)}… (${text.length} characters)` : text;
}

/** Why a `fetch` got no answer: the system code (ECONNREFUSED, ENOTFOUND…) when there is one, else the message. */
export function noAnswerReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown; errors?: { code?: unknown }[] } }).cause;
  const code = cause?.code ?? cause?.errors?.find((e) => typeof e.code === "string")?.code;
  if (typeof code === "string") return code;
  if (typeof cause?.message === "string" && cause.message !== "") return cause.message;
  return error instanceof Error ? error.message : String(error);
}
