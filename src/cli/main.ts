/**
 * `rest-webhooks`: the command line for webhook and API developers (listen, send, verify, check). An adapter:
 * arguments, terminals, sockets and files live here; the signing, retry and law logic is the library's own.
 */
import { createRequire } from "node:module";
import { runListen } from "./listen";
import { createOutput, EXIT, type Output, UsageError } from "./output";
import { runSend } from "./send";
import { runVerify } from "./verify";

const USAGE = `Usage: rest-webhooks <command> [options]

Commands:
  listen   A local consumer that verifies each delivery and prints one line per event
  send     Sign and send a test event; retries on our backoff with --repeat
  verify   Explain whether a captured request (on stdin) verifies, and why not
  check    Run the HTTP laws against a live server from its OpenAPI document

Every command takes --help and --json. Exit codes: 0 success, 1 a check failed, 2 misuse.
Colour only on a terminal; NO_COLOR turns it off. rest-webhooks --version prints the version.`;

type Run = (argv: readonly string[], out: Output) => Promise<number>;

// Each command's part of the CLI; fast-check (a peer dependency) is loaded only for check.
const COMMANDS: Record<string, () => Promise<Run>> = {
  listen: async () => runListen,
  send: async () => runSend,
  verify: async () => runVerify,
  check: async () => (await import("./check")).runCheck,
};

function version(): string {
  for (const path of ["../../package.json", "../package.json"]) {
    try {
      return (createRequire(import.meta.url)(path) as { version: string }).version;
    } catch {
      // the next candidate: sources sit one level deeper than the bundle
    }
  }
  return "unknown";
}

/** Loads a command's part of the CLI; a missing peer it needs is misuse, named. */
async function load(name: string, part: () => Promise<Run>): Promise<Run> {
  try {
    return await part();
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_MODULE_NOT_FOUND" && String(error).includes("fast-check")) {
      throw new UsageError(`${name} needs fast-check (a peer dependency): npm i -D fast-check`);
    }
    throw error;
  }
}

async function main(argv: readonly string[]): Promise<number> {
  const [given, ...after] = argv;
  // `rest-webhooks help <command>` is `rest-webhooks <command> --help`, as git and npm read it.
  const helpFor = given === "help" && after[0] !== undefined && Object.hasOwn(COMMANDS, after[0]);
  const name = helpFor ? after[0] : given;
  const rest = helpFor ? ["--help", ...after.slice(1)] : after;
  const json = rest.includes("--json");
  const out = createOutput(json);
  // No command is misuse: the usage goes to stderr with exit 2, as for an unknown one; asked for, to stdout with 0.
  if (name === undefined) {
    process.stderr.write(`${USAGE}\n`);
    return EXIT.usage;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    out.help(USAGE);
    return EXIT.ok;
  }
  if (name === "--version" || name === "-v") {
    out.help(version());
    return EXIT.ok;
  }
  // Own keys only: `rest-webhooks toString` is an unknown command, not Object.prototype's.
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (command === undefined) {
    process.stderr.write(`rest-webhooks: unknown command "${name}"\n\n${USAGE}\n`);
    return EXIT.usage;
  }
  try {
    const run = await load(name, command);
    return await run(rest, out);
  } catch (error) {
    if (error instanceof UsageError) {
      // On one line: a JSON document, and a JSON Lines record too, as `listen --json` promises one per line.
      if (json) process.stdout.write(`${JSON.stringify({ error: { code: error.code, message: error.message } })}\n`);
      process.stderr.write(`rest-webhooks ${name}: ${error.message}\nSee: rest-webhooks ${name} --help\n`);
      return EXIT.usage;
    }
    throw error;
  }
}

// A reader that stops early (`| head`, `grep -m1`) closes the pipe: the rest of the output has nowhere to go, which
// is no failure of the command (an unhandled EPIPE was a stack trace): its exit code stays the verdict.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
  });
}

process.exitCode = await main(process.argv.slice(2));
