// The CPU time a server process has spent, read by a load generator around each timed run: on a shared VM, time
// stolen from the server's core moves its requests/s but not its CPU time per request.
import { readdirSync, readFileSync } from "node:fs";

/**
 * The CPU time of every thread of process `pid` so far, in nanoseconds (Linux's per-thread schedstat: to the
 * nanosecond, where /proc/<pid>/stat counts ticks of 10 ms); NaN where it cannot be read (no pid, not Linux). Summed
 * over threads, so the work a server hands to its libuv pool or V8's helper threads counts as its own; a thread that
 * ends between two readings takes its time with it (a server's threads live as long as it does).
 */
export function serverCpuNs(pid: number | undefined): number {
  if (pid === undefined || !Number.isInteger(pid)) return Number.NaN;
  try {
    let total = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    }
    return total;
  } catch {
    return Number.NaN;
  }
}
