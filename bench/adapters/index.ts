// bench/adapters: requests/s of the same answers through rest-webhooks and written natively:
// - node adapter vs bare node:http: a trivial JSON handler (GET /hello → {"hello":"world"});
// - our router mounted in Express vs the same routes as native Express routes, and in Fastify (the catch-all
//   plugin, and the per-route alternative) vs native Fastify routes: GET /users/u_42 among a dozen routes.
// Each server runs in a process of its own (serve.ts), so none warms or pollutes another's JIT state;
// autocannon runs in another process (load.ts). Only one server is under load at a time. Rounds alternate the
// order within a pair to spread machine noise over both; then the same pair runs in one process without sockets
// (in-process.ts, light-my-request), which prints a second `ratio:` line per case. Two measures per load round: requests/s, and the server
// process's CPU time per request (asked of the server before and after the round), which other processes on a
// shared machine disturb far less. The `ratio:` line is the median of per-round CPU ratios (their µs per
// request ÷ ours: above 1, ours costs less); the requests/s ratio is printed beside it.
// BENCH_CASES=express,fastify picks cases (node, express, fastify, fastify-per-route, otel: rest-webhooks/otel's
// instrumented middleware against the plain ones, in process); BENCH_SECONDS, BENCH_ROUNDS.

import type { ChildProcess } from "node:child_process";
import { spawn, spawnSync } from "node:child_process";
import { isDeepStrictEqual } from "node:util";
import { AS_BUILT } from "../support/as-built";
import { SERVERS, type ServerKind } from "./servers";

interface Running {
  readonly name: string;
  readonly url: string;
  readonly child: ChildProcess;
  /** The server's CPU time so far, µs. */
  cpu(): Promise<number>;
}

// BENCH_CHECK=1: every case's check and one short round of load, no figures, no in-process or OpenTelemetry runs.
// test/bench runs it, so a library change that breaks a server's answers fails a test rather than the next bench run.
const CHECK_ONLY = process.env.BENCH_CHECK === "1";
const SECONDS = CHECK_ONLY ? 0.3 : Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = CHECK_ONLY ? 1 : Number(process.env.BENCH_ROUNDS ?? 6);
const WARMUP_SECONDS = CHECK_ONLY ? 0 : 2;
const loader = new URL("./load.ts", import.meta.url).pathname;
const serve = new URL("./serve.ts", import.meta.url).pathname;
const inProcessScript = new URL("./in-process.ts", import.meta.url).pathname;

function startServer(which: ServerKind): Promise<Running> {
  const name = SERVERS[which];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...AS_BUILT, serve, which], { stdio: ["pipe", "pipe", "inherit"] });
    let buffered = "";
    const lines: Array<(line: string) => void> = [];
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => {
      buffered += chunk;
      for (let end = buffered.indexOf("\n"); end !== -1; end = buffered.indexOf("\n")) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        lines.shift()?.(line);
      }
    });
    const nextLine = () => new Promise<string>((r) => lines.push(r));
    const cpu = () => {
      const line = nextLine();
      child.stdin?.write("cpu\n");
      return line.then(Number);
    };
    void nextLine().then((url) => resolve({ name, url, child, cpu }));
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
    const child = spawn(process.execPath, [...AS_BUILT, loader, url, String(seconds)], {
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

/** Correctness before timing: each server answers its URL with the expected JSON. */
async function check(running: Running, expected: unknown): Promise<void> {
  const response = await fetch(running.url);
  const body = await response.json();
  if (
    response.status !== 200 ||
    !response.headers.get("content-type")?.startsWith("application/json") ||
    !isDeepStrictEqual(body, expected)
  ) {
    throw new Error(`${running.name} answered ${response.status} ${JSON.stringify(body)}`);
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

interface Case {
  readonly ours: ServerKind;
  readonly peer: ServerKind;
  readonly expected: unknown;
}

const framework = { route: "/users/{user_id}", user_id: "u_42" };
const CASES: Record<string, Case> = {
  node: { ours: "adapter", peer: "bare", expected: { hello: "world" } },
  express: { ours: "express-router", peer: "express-native", expected: framework },
  fastify: { ours: "fastify-router", peer: "fastify-native", expected: framework },
  "fastify-per-route": { ours: "fastify-per-route", peer: "fastify-native", expected: framework },
};
const picked = (process.env.BENCH_CASES ?? [...Object.keys(CASES), "otel"].join(",")).split(",");

/** Check mode times nothing: both start at once, and one that started is stopped if the other could not start. */
async function startBoth(oursKind: ServerKind, peerKind: ServerKind): Promise<[Running, Running]> {
  const [ours, peer] = await Promise.allSettled([startServer(oursKind), startServer(peerKind)]);
  if (ours.status === "fulfilled" && peer.status === "fulfilled") return [ours.value, peer.value];
  for (const started of [ours, peer]) if (started.status === "fulfilled") started.value.child.kill();
  throw ours.status === "rejected" ? ours.reason : (peer as PromiseRejectedResult).reason;
}

async function runCase({ ours: oursKind, peer: peerKind, expected }: Case): Promise<void> {
  const [ours, peer] = CHECK_ONLY
    ? await startBoth(oursKind, peerKind)
    : [await startServer(oursKind), await startServer(peerKind)];
  try {
    await check(ours, expected);
    await check(peer, expected);
    const path = new URL(ours.url).pathname;
    console.log(
      `\nGET ${path}, autocannon in another process: 50 connections, pipelining 1, ${SECONDS} s × ${ROUNDS} rounds, each server in its own process; ratio = median of per-round CPU-per-request ratios`,
    );
    if (WARMUP_SECONDS > 0) for (const running of [ours, peer]) await load(running.url, WARMUP_SECONDS);
    const rounds = new Map<Running, number[]>([
      [ours, []],
      [peer, []],
    ]);
    const cpuPerRequest = new Map<Running, number[]>([
      [ours, []],
      [peer, []],
    ]);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? [ours, peer] : [peer, ours];
      for (const running of order) {
        const before = await running.cpu();
        const result = await load(running.url, SECONDS);
        const micros = ((await running.cpu()) - before) / result.total;
        cpuPerRequest.get(running)?.push(micros);
        if (result.non2xx > 0 || result.errors > 0) {
          throw new Error(`${running.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
        }
        rounds.get(running)?.push(result.rps);
        console.log(
          `  round ${round + 1}  ${running.name.padEnd(26)} ${Math.round(result.rps).toLocaleString("en-US").padStart(7)} req/s  ${micros.toFixed(1)} µs CPU/request`,
        );
      }
    }
    const oursRounds = rounds.get(ours) ?? [];
    const peerRounds = rounds.get(peer) ?? [];
    // Each round loads both back to back, so slow drifts of the machine cancel within a pair.
    const rpsRatio = median(oursRounds.map((rps, i) => rps / (peerRounds[i] ?? rps)));
    const oursCpu = cpuPerRequest.get(ours) ?? [];
    const peerCpu = cpuPerRequest.get(peer) ?? [];
    const cpuRatio = median(oursCpu.map((micros, i) => (peerCpu[i] ?? micros) / micros));
    for (const [running, rps, cpu] of [
      [ours, oursRounds, oursCpu],
      [peer, peerRounds, peerCpu],
    ] as const) {
      console.log(
        `${running.name.padEnd(30)} ${Math.round(median(rps)).toLocaleString("en-US")} req/s, ${median(cpu).toFixed(1)} µs CPU/request (medians)`,
      );
    }
    if (CHECK_ONLY) {
      console.log(`checked: ${ours.name} and ${peer.name} answered alike, and under load`);
      return;
    }
    console.log(`requests/s ratio (median of rounds): ${rpsRatio.toFixed(2)}`);
    console.log(`ratio: ${ours.name} vs ${peer.name} = ${cpuRatio.toFixed(2)}`);
  } finally {
    ours.child.kill();
    peer.child.kill();
  }
  // The same pair in one process, without sockets: its own process, after the servers are gone.
  const inProcess = spawnSync(process.execPath, [...AS_BUILT, inProcessScript, oursKind, peerKind], {
    stdio: "inherit",
  });
  if (inProcess.status !== 0) throw new Error(`in-process run of ${oursKind} vs ${peerKind} failed`);
}

if (CHECK_ONLY) {
  // Nothing is timed, so the cases need not wait for each other: all at once, as a test runs them.
  const unknown = picked.filter((name) => name !== "otel" && CASES[name] === undefined);
  if (unknown.length > 0)
    throw new Error(`unknown case ${unknown.join(", ")}; cases: ${Object.keys(CASES).join(", ")}`);
  // Settled, not raced: a failing case must not end the process while another's servers still run (they would
  // outlive it, and hold the output a test reads).
  const outcomes = await Promise.allSettled(
    picked.flatMap((name) => (name === "otel" ? [] : [runCase(CASES[name] as Case)])),
  );
  const failed = outcomes.find((outcome) => outcome.status === "rejected");
  if (failed !== undefined) throw failed.reason;
  process.exit(0);
}
for (const name of picked) {
  if (name === "otel") {
    // rest-webhooks/otel's rate-limit and idempotency instrumentation against the plain middleware (otel.ts).
    const run = spawnSync(process.execPath, [...AS_BUILT, new URL("./otel.ts", import.meta.url).pathname], {
      stdio: "inherit",
    });
    if (run.status !== 0) throw new Error("bench/adapters otel case failed");
    continue;
  }
  const chosen = CASES[name];
  if (chosen === undefined) throw new Error(`unknown case ${name}; cases: ${Object.keys(CASES).join(", ")}`);
  await runCase(chosen);
}
