/**
 * Spawns the real `rest-webhooks` executable: the TypeScript entry through tsx (`node --import tsx
 * src/cli/main.ts`), or a built file when given. No colour (NO_COLOR), no inherited WEBHOOK_SECRET.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("../../", import.meta.url));
const SOURCE = ["--import", "tsx", "src/cli/main.ts"];

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
export function runCli(
  args: readonly string[],
  options: { stdin?: Uint8Array | string; entry?: readonly string[] } = {},
): Promise<CliRun> {
  const child = spawnCli(args, options.entry ?? SOURCE);
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
export function startCli(args: readonly string[]): RunningCli {
  const child = spawnCli(args, SOURCE);
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
