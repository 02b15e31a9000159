/**
 * Four processes hammer one key through the Redis store (server clock): together they admit what one
 * policy allows. The documented bound: in any interval of length L, at most burst + L / T requests,
 * T = window / quota. The interval is bracketed by Redis TIME taken before the first and after the last check.
 *
 * Robust on a loaded machine: the start instant is set only once every child has booted and connected,
 * and the rate (50/s) is far below what 16 checks in flight sustain even at 100 ms per round trip.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { redisUrl, skipWithoutRedis, uniqueName } from "../support/services";

const HAMMER = fileURLToPath(new URL("./fixtures/hammer.ts", import.meta.url));
const children: ChildProcess[] = [];

interface Report {
  admitted: number;
  checks: number;
  firstMs: number;
  lastMs: number;
}

interface Hammer {
  /** Resolves once the child has booted and connected. */
  ready: Promise<void>;
  /** Tells the child when to start (Unix ms, Redis server clock). */
  start(atMs: number): void;
  report: Promise<Report>;
}

function spawnHammer(args: string[]): Hammer {
  const child = spawn(process.execPath, ["--import", "tsx", HAMMER, ...args], { stdio: ["pipe", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  let err = "";
  let onReady = () => {};
  const ready = new Promise<void>((resolve) => {
    onReady = resolve;
  });
  child.stdout?.on("data", (chunk) => {
    out += chunk;
    if (out.startsWith("ready\n")) onReady();
  });
  child.stderr?.on("data", (chunk) => {
    err += chunk;
  });
  const report = new Promise<Report>((resolve, reject) => {
    child.on("exit", (code) => {
      if (code === 0) resolve(JSON.parse(out.slice("ready\n".length)) as Report);
      else reject(new Error(`hammer exited with ${code}: ${err}`));
    });
  });
  return { ready, start: (atMs) => child.stdin?.end(`${atMs}\n`), report };
}

describe.skipIf(skipWithoutRedis())("Redis store across processes", () => {
  const prefix = `${uniqueName("rl_mp")}:`;

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
    const client = new Redis(redisUrl as string);
    await client.del(`${prefix}one-key`);
    client.disconnect();
  });

  it("4 processes admit together at most burst + L/T, and nearly that many", { timeout: 60_000 }, async () => {
    const quota = 50; // per second: T = 20 ms
    const burst = 20;
    const args = [redisUrl as string, prefix, String(quota), "1", String(burst), "1500"];
    const hammers = [spawnHammer(args), spawnHammer(args), spawnHammer(args), spawnHammer(args)];
    await Promise.all(hammers.map((hammer) => hammer.ready));
    // Every child, booted and connected, waits for the same instant on the server clock.
    const client = new Redis(redisUrl as string);
    const [seconds, micros] = await client.time();
    client.disconnect();
    const startMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) + 500;
    for (const hammer of hammers) hammer.start(startMs);
    const reports = await Promise.all(hammers.map((hammer) => hammer.report));

    const admitted = reports.reduce((sum, report) => sum + report.admitted, 0);
    const first = Math.min(...reports.map((report) => report.firstMs));
    const last = Math.max(...reports.map((report) => report.lastMs));
    const bound = burst + ((last - first) * quota) / 1000;
    expect(admitted).toBeLessThanOrEqual(Math.floor(bound));
    // While every process hammers, a freed unit is taken within a round trip: nearly the whole bound is used.
    const together =
      Math.min(...reports.map((report) => report.lastMs)) - Math.max(...reports.map((report) => report.firstMs));
    expect(together).toBeGreaterThan(500);
    expect(admitted).toBeGreaterThanOrEqual(Math.floor(0.8 * (burst + (together * quota) / 1000)));
    expect(reports.every((report) => report.checks > report.admitted)).toBe(true);
  });
});
