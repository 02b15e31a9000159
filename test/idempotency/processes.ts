/** Spawning and stopping the fixture servers of the multi-process tests. */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { bundledOnce } from "../support/bundled-script";

// Compiled once per test file for all its starts (bundled-script.ts), not by tsx at each start: the crash tests
// start a dozen servers.
const serverFile = bundledOnce(fileURLToPath(new URL("./fixtures/server.ts", import.meta.url)));

/** A running fixture server. */
export interface Child {
  process: ChildProcess;
  port: number;
  /** Resolves when the child prints `line`. */
  waitFor(line: string): Promise<void>;
}

/** Starts a fixture server with `env` and waits for its port. */
export async function startServer(env: Record<string, string>): Promise<Child> {
  const child = spawn(process.execPath, [await serverFile()], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  const waiters: { line: string; resolve: () => void }[] = [];
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
    for (const w of waiters) if (output.includes(`${w.line}\n`)) w.resolve();
  });
  const waitFor = (line: string) =>
    new Promise<void>((resolve, reject) => {
      if (output.includes(`${line}\n`)) return resolve();
      waiters.push({ line, resolve });
      child.once("exit", (code) => reject(new Error(`server exited (${code}) before printing "${line}"`)));
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("server did not start in 30 s")), 30_000);
    child.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
    child.stdout?.on("data", () => {
      const match = /listening (\d+)\n/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ process: child, port: Number(match[1]), waitFor });
      }
    });
  });
}

/** Kills `children` (SIGKILL) and waits until each has exited. */
export async function stopAll(children: readonly Child[]): Promise<void> {
  await Promise.all(
    children.map(
      ({ process: child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill("SIGKILL");
        }),
    ),
  );
}

/** What one POST got back. */
export interface Answer {
  status: number;
  replayed: boolean;
  body: string;
  code: unknown;
  retryAfter: string | null;
}

/** POSTs an order with `key` to the fixture server on `port`. */
export async function post(port: number, key: string): Promise<Answer> {
  const res = await fetch(`http://127.0.0.1:${port}/orders`, {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": `"${key}"`, "x-account": "acct_1" },
    body: '{"sku":"book","qty":1}',
  });
  const body = await res.text();
  return {
    status: res.status,
    replayed: res.headers.get("idempotent-replayed") === "true",
    body,
    code: res.headers.get("content-type") === "application/problem+json" ? JSON.parse(body).code : undefined,
    retryAfter: res.headers.get("retry-after"),
  };
}
