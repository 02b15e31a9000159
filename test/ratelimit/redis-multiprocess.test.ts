/**
 * Four processes hammer one key through the Redis store (server clock): together they admit what one
 * policy allows. The documented bound: in any interval of length L, at most burst + L / T requests,
 * T = window / quota. The interval is bracketed by Redis TIME taken before the first and after the last check.
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

function run(args: string[]): Promise<Report> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", HAMMER, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    let out = "";
    let err = "";
    child.stdout?.on("data", (chunk) => {
      out += chunk;
    });
    child.stderr?.on("data", (chunk) => {
      err += chunk;
    });
    child.on("exit", (code) => {
      if (code === 0) resolve(JSON.parse(out) as Report);
      else reject(new Error(`hammer exited with ${code}: ${err}`));
    });
  });
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
    const quota = 200; // per second: T = 5 ms
    const burst = 50;
    const client = new Redis(redisUrl as string);
    const [seconds] = await client.time();
    client.disconnect();
    // Every child waits for the same instant on the server clock, leaving time for tsx to boot.
    const startMs = Number(seconds) * 1000 + 4_000;
    const args = [redisUrl as string, prefix, String(quota), "1", String(burst), String(startMs), "1500"];
    const reports = await Promise.all([run(args), run(args), run(args), run(args)]);

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
