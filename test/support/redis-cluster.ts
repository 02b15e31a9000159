/**
 * A Redis Cluster of three masters started for one suite: `redis-server` processes on free ports, in a temporary
 * directory, given a third of the 16,384 slots each and introduced to each other, then stopped and removed after the
 * suite. It runs wherever the Redis suites run (REDIS_URL is set, as .ci/run sets it) and `redis-server` is on PATH
 * (`REDIS_SERVER` names another binary). Without REDIS_URL it skips like every Redis suite; on CI a missing binary
 * fails the suite instead of skipping it.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cluster, type ClusterOptions, Redis } from "ioredis";
import { Cluster as Cluster5 } from "ioredis-5";
import { afterAll } from "vitest";
import { canListen } from "./free-port";
import { skipWithoutRedis } from "./services";

const SLOTS = 16_384;
const binary = process.env.REDIS_SERVER ?? "redis-server";

/** A running cluster: its masters' addresses, for `new Cluster(nodes)`. */
export interface LocalCluster {
  readonly nodes: ReadonlyArray<{ host: string; port: number }>;
  stop(): Promise<void>;
}

let announced = false;

/** True when the cluster suites must skip (no REDIS_URL, or no redis-server outside CI); prints the reason once. */
export function skipWithoutRedisCluster(): boolean {
  if (skipWithoutRedis()) return true;
  if (process.env.CI === "true") return false;
  if (spawnSync(binary, ["--version"]).status === 0) return false;
  if (!announced) {
    announced = true;
    console.warn(
      `[skip] Redis Cluster suites skipped: ${binary} is not on PATH (set REDIS_SERVER=/path/to/redis-server)`,
    );
  }
  return true;
}

/**
 * A port free on 127.0.0.1 whose cluster bus port (+10,000) is free too. Both below 32,768, where Linux's ephemeral
 * ports start (see test/support/free-port.ts), and apart from the range its `freePort` picks from.
 */
async function freePort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 2_768);
    if (taken.has(port) || taken.has(port + 10_000)) continue;
    if ((await canListen(port)) && (await canListen(port + 10_000))) {
      taken.add(port);
      taken.add(port + 10_000);
      return port;
    }
  }
}

async function until(what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`Redis Cluster: ${what} within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Waits until a node answers as this child; `false` when its server exited first (its port was taken between the
 * check and its bind: another port is tried). The answer must name the child's pid: a server another suite started
 * on the same port in that window would answer PING too, and its cluster would be joined to this one.
 */
async function answers(child: ChildProcess, admin: Redis, port: number, ms = 15_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) return false;
    const ours = async () => {
      if (admin.status !== "ready") await admin.connect();
      const info = String(await admin.info("server"));
      return info.match(/^process_id:(\d+)/m)?.[1] === String(child.pid);
    };
    if (await ours().catch(() => false)) return true;
    if (Date.now() > deadline)
      throw new Error(`Redis Cluster: ${binary} on port ${port} did not answer within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Starts three masters and waits until every one reports `cluster_state:ok`. */
export async function startRedisCluster(): Promise<LocalCluster> {
  const dir = mkdtempSync(join(tmpdir(), "rw-redis-cluster-"));
  const taken = new Set<number>();
  const ports: number[] = [];
  const processes: ChildProcess[] = [];
  const admins: Redis[] = [];
  let retries = 0;
  // Should the test process end without stopping the cluster, its servers go with it.
  const killAll = () => {
    for (const child of processes) child.kill("SIGKILL");
  };
  process.once("exit", killAll);
  const stop = async () => {
    process.off("exit", killAll);
    for (const admin of admins) admin.disconnect();
    await Promise.all(
      processes.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once("exit", () => resolve());
            child.kill("SIGKILL");
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    while (ports.length < 3) {
      const port = await freePort(taken);
      const child = spawn(
        binary,
        [
          "--port",
          String(port),
          "--bind",
          "127.0.0.1",
          "--cluster-enabled",
          "yes",
          "--cluster-config-file",
          `nodes-${port}.conf`,
          "--dir",
          dir,
          "--save",
          "",
          "--appendonly",
          "no",
        ],
        { stdio: "ignore" },
      );
      processes.push(child);
      await new Promise<void>((resolve, reject) => {
        child.once("spawn", resolve);
        child.once("error", (error) => reject(new Error(`Redis Cluster: cannot run ${binary}: ${error.message}`)));
      });
      const admin = new Redis({ host: "127.0.0.1", port, lazyConnect: true, maxRetriesPerRequest: 0 });
      admins.push(admin);
      admin.on("error", () => {}); // refused while the server starts: it is asked again
      if (await answers(child, admin, port)) {
        ports.push(port);
        continue;
      }
      // Gone before answering: forget this node and try another port.
      admin.disconnect();
      admins.pop();
      processes.pop();
      if (++retries > 5) throw new Error(`Redis Cluster: ${binary} exited before answering, ${retries} times`);
    }
    // A third of the slots each, then every node meets the first: the cluster's gossip does the rest.
    const share = Math.ceil(SLOTS / admins.length);
    for (const [i, admin] of admins.entries()) {
      const slots = Array.from({ length: Math.min(share, SLOTS - i * share) }, (_, k) => i * share + k);
      await admin.call("CLUSTER", "ADDSLOTS", ...slots);
      if (i > 0) await admin.call("CLUSTER", "MEET", "127.0.0.1", String(ports[0]));
    }
    await until("the cluster did not reach cluster_state:ok", async () => {
      const states = await Promise.all(admins.map((admin) => admin.call("CLUSTER", "INFO")));
      return states.every((info) => String(info).includes("cluster_state:ok"));
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { nodes: ports.map((port) => ({ host: "127.0.0.1", port })), stop };
}

/** Connects clients of a suite's cluster; `nodes()` gives its masters' addresses, for other clients. */
export interface ClusterConnect {
  (options?: ClusterOptions, major?: 5 | 6): Promise<Cluster>;
  nodes(): Promise<LocalCluster["nodes"]>;
}

/**
 * For one suite: clients (ioredis 6, or 5) of a cluster started at the suite's first use, so a suite that skips
 * starts none, and stopped after it. Call it inside the suite's `describe`.
 */
export function useRedisCluster(): ClusterConnect {
  let started: Promise<LocalCluster> | undefined;
  afterAll(async () => {
    await (await started)?.stop();
  }, 30_000);
  const nodes = async () => {
    started ??= startRedisCluster();
    return (await started).nodes;
  };
  const connect = async (options: ClusterOptions = {}, major: 5 | 6 = 6) => {
    const masters = [...(await nodes())];
    // ioredis 5, the other major the stores' peer range allows, driven through the calls ioredis 6 has too.
    return major === 5
      ? (new Cluster5(masters, options as object) as unknown as Cluster)
      : new Cluster(masters, options);
  };
  return Object.assign(connect, { nodes });
}
