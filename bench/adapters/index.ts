// bench/adapters: requests/s of a trivial JSON handler (GET /hello → {"hello":"world"}) served through
// rest-webhooks' node adapter versus the same handler on bare node:http. Each server runs in a process
// of its own (serve.ts), so neither warms or pollutes the other's JIT state; autocannon runs in a third
// process (load.ts). Only one server is under load at a time.
// Rounds alternate the order to spread machine noise over both; the median round is reported.

import type { ChildProcess } from "node:child_process";
import { spawn } from "node:child_process";
import { isDeepStrictEqual } from "node:util";

interface Running {
  readonly name: string;
  readonly url: string;
  readonly child: ChildProcess;
}

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const WARMUP_SECONDS = 2;
const loader = new URL("./load.ts", import.meta.url).pathname;
const serve = new URL("./serve.ts", import.meta.url).pathname;

function startServer(which: "adapter" | "bare", name: string): Promise<Running> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", serve, which], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => {
      out += chunk;
      if (out.includes("\n")) resolve({ name, url: out.trim(), child });
    });
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`${name} server exited with ${code}`)));
  });
}

interface Load {
  rps: number;
  total: number;
  non2xx: number;
  errors: number;
}

function load(url: string, seconds: number): Promise<Load> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", loader, url, String(seconds)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), (seconds + 30) * 1000);
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => (out += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`load generator exited with ${code}`));
      else resolve(JSON.parse(out.trim()) as Load);
    });
  });
}

async function check(running: Running): Promise<void> {
  const response = await fetch(running.url);
  const body = await response.json();
  if (
    response.status !== 200 ||
    response.headers.get("content-type") !== "application/json" ||
    !isDeepStrictEqual(body, { hello: "world" })
  ) {
    throw new Error(`${running.name} answered ${response.status} ${JSON.stringify(body)}`);
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

const adapter = await startServer("adapter", "node adapter JSON");
const bare = await startServer("bare", "bare node:http");
try {
  await check(adapter);
  await check(bare);
  console.log(
    `GET /hello, autocannon in a second process: 50 connections, pipelining 1, ${SECONDS} s × ${ROUNDS} rounds, each server in its own process; ratio = median of per-round ratios`,
  );
  for (const running of [adapter, bare]) await load(running.url, WARMUP_SECONDS);
  const results = new Map<string, number[]>([
    [adapter.name, []],
    [bare.name, []],
  ]);
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [adapter, bare] : [bare, adapter];
    for (const running of order) {
      const result = await load(running.url, SECONDS);
      if (result.non2xx > 0 || result.errors > 0) {
        throw new Error(`${running.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
      }
      results.get(running.name)?.push(result.rps);
      console.log(
        `  round ${round + 1}  ${running.name.padEnd(20)} ${Math.round(result.rps).toLocaleString("en-US")} req/s`,
      );
    }
  }
  const ours = median(results.get(adapter.name) ?? []);
  const theirs = median(results.get(bare.name) ?? []);
  // The ratio is the median of per-round ratios: each round loads both back to back, so slow drifts of
  // the machine cancel within a pair.
  const adapterRounds = results.get(adapter.name) ?? [];
  const bareRounds = results.get(bare.name) ?? [];
  const pairRatio = median(adapterRounds.map((rps, i) => rps / (bareRounds[i] ?? rps)));
  console.log(`${adapter.name.padEnd(30)} ${Math.round(ours).toLocaleString("en-US")} req/s (median)`);
  console.log(`${bare.name.padEnd(30)} ${Math.round(theirs).toLocaleString("en-US")} req/s (median)`);
  console.log(`ratio: node adapter JSON vs bare node:http = ${pairRatio.toFixed(2)}`);
} finally {
  adapter.child.kill();
  bare.child.kill();
}
