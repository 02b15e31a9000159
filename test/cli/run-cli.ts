/**
 * Spawns the real `rest-webhooks` executable: src/cli/main.ts bundled once per test file (bundled-script.ts; `check`
 * in a chunk of its own, as tsup builds the bin) and started with plain `node`, or another entry when given. Under
 * `node --import tsx` each run compiled the whole CLI anew, a second or more apiece. No colour (NO_COLOR), no
 * inherited WEBHOOK_SECRET.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { bundledOnce } from "../support/bundled-script";

export const root = fileURLToPath(new URL("../../", import.meta.url));
/** The sources through tsx, for what a bundle elsewhere cannot show (main.ts finds package.json from its own file). */
export const SOURCE = ["--import", "tsx", "src/cli/main.ts"];
const bundled = bundledOnce(join(root, "src", "cli", "main.ts"), { splitting: true });

/** The entry `runCli` and `startCli` start by default: the bundled CLI, for `spawn(process.execPath, entry)`. */
export async function cliEntry(): Promise<readonly string[]> {
  return [await bundled()];
}

/** A finished run. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function spawnCli(args: readonly string[], entry: readonly string[]): ChildProcess {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
  delete env.WEBHOOK_SECRET;
  delete env.FORCE_COLOR;
  return spawn(process.execPath, [...entry, ...args], { cwd: root, env, stdio: ["pipe", "pipe", "pipe"] });
}

/** Runs the CLI to its end, writing `stdin` to it. */
export async function runCli(
  args: readonly string[],
  options: { stdin?: Uint8Array | string; entry?: readonly string[] } = {},
): Promise<CliRun> {
  const child = spawnCli(args, options.entry ?? (await cliEntry()));
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdin?.end(options.stdin ?? "");
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** A CLI process that keeps running (listen), with its output so far and a way to wait for a line. */
export interface RunningCli {
  output(): string;
  /** Resolves with the first stdout line matching `pattern` (now or later); rejects if the process ends first. */
  line(pattern: RegExp): Promise<string>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** Starts the CLI and leaves it running. */
export async function startCli(args: readonly string[]): Promise<RunningCli> {
  const child = spawnCli(args, await cliEntry());
  let stdout = "";
  let stderr = "";
  let exited = false;
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const waiter of waiters) waiter();
  };
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    notify();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const closed = new Promise<number | null>((resolve) =>
    child.on("close", (code) => {
      exited = true;
      notify();
      resolve(code);
    }),
  );
  return {
    output: () => stdout,
    line(pattern) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = stdout.split("\n").find((line) => pattern.test(line));
          if (found !== undefined) {
            waiters.delete(check);
            resolve(found);
          } else if (exited) {
            waiters.delete(check);
            reject(new Error(`the CLI ended before printing ${pattern}:\n${stdout}\n${stderr}`));
          }
        };
        waiters.add(check);
        check();
      });
    },
    stop() {
      if (!exited) child.kill("SIGTERM");
      return closed;
    },
  };
}
