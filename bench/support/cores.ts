// Separate cores for the servers and the load generator, so neither takes the other's core: the servers' process
// (its main thread, libuv pool and V8 helper threads) on every core but the last, autocannon on the last. Needs
// Linux's `taskset` and at least two cores; otherwise, or with BENCH_PIN=0, both share every core as before.
import { spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";

/** How the servers and the load generator are placed, for the bench's header line. */
export interface Placement {
  /** The command prefix that starts a process on the load generator's core (empty when not pinned). */
  readonly loaderPrefix: readonly string[];
  readonly description: string;
}

/** Pins this process (all its threads) off the last core and returns how to start the load generator on it. */
export function placeProcesses(): Placement {
  const cores = availableParallelism();
  const shared = { loaderPrefix: [], description: `servers and load generator share all ${cores} cores` };
  if (process.env.BENCH_PIN === "0" || cores < 2 || process.platform !== "linux") return shared;
  const last = cores - 1;
  const servers = last === 1 ? "0" : `0-${last - 1}`;
  const pinned = spawnSync("taskset", ["-a", "-p", "-c", servers, String(process.pid)], { stdio: "ignore" });
  if (pinned.status !== 0) return shared;
  return {
    loaderPrefix: ["taskset", "-c", String(last)],
    description: `servers pinned to core${last === 1 ? "" : "s"} ${servers}, load generator to core ${last} (taskset; BENCH_PIN=0 to share)`,
  };
}
