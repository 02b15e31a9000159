import type { BenchRequest } from "./data";

type Lookup = (method: string, path: string) => unknown;

/**
 * A timing loop compiled separately per contender (`new Function`), so no router's type feedback
 * leaks into another's loop.
 */
function compileLoop(): (lookup: Lookup, methods: string[], paths: string[], reps: number) => number {
  return new Function(
    "lookup",
    "methods",
    "paths",
    "reps",
    `let sink = 0;
     const n = paths.length;
     for (let r = 0; r < reps; r++) {
       for (let i = 0; i < n; i++) if (lookup(methods[i], paths[i]) != null) sink++;
     }
     return sink;`,
  ) as (lookup: Lookup, methods: string[], paths: string[], reps: number) => number;
}

// CPU time of this process, not wall-clock time: on a shared machine, the time the process spends
// waiting for a core would otherwise count against whichever router was running.
function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** A prepared measurement: `run(ms)` times lookups for about `ms` of CPU time and returns lookups per CPU second. */
export interface Timer {
  run(ms: number): number;
}

/** Prepares the timing of `lookup` over `requests`. */
export function timer(lookup: Lookup, requests: readonly BenchRequest[]): Timer {
  const loop = compileLoop();
  const methods = requests.map((request) => request.method);
  const paths = requests.map((request) => request.path);
  let reps = 1;
  return {
    run(ms) {
      for (;;) {
        const start = cpuMs();
        loop(lookup, methods, paths, reps);
        const elapsed = cpuMs() - start;
        const rate = (reps * paths.length * 1000) / elapsed;
        const enough = elapsed >= ms / 2;
        // Aim the next sample at `ms`, up or down (at most ×10 per step).
        reps = Math.max(1, Math.min(reps * 10, Math.round((reps * ms) / Math.max(elapsed, 1e-3))));
        if (enough) return rate;
      }
    },
  };
}
