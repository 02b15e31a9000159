/** Timing helpers for the idempotency bench. */
import type { IdempotencyStore, StoredResponse } from "../../src/idempotency";

// Operation numbers are never reused, even across runs: every key an operation derives from its
// number is fresh, so a later run measures first requests, not replays of an earlier run's keys.
let next = 0;

/** Operations per second by the wall clock and by this process's CPU time (user + system). */
export interface Rate {
  wall: number;
  cpu: number;
}

/** Runs `op(i)` with `concurrency` loops for about `ms` milliseconds; returns operations per second. */
export async function throughput(
  op: (i: number) => Promise<unknown> | unknown,
  { ms, concurrency = 1, warmupMs = 300 }: { ms: number; concurrency?: number; warmupMs?: number },
): Promise<Rate> {
  const run = async (until: number): Promise<Rate> => {
    let done = 0;
    const loop = async () => {
      // Check the clock every 64 operations: reading it costs as much as a memory-store operation.
      for (;;) {
        for (let j = 0; j < 64; j++) {
          await op(next++);
          done++;
        }
        if (performance.now() >= until) return;
      }
    };
    const start = performance.now();
    const cpu = process.cpuUsage();
    await Promise.all(Array.from({ length: concurrency }, loop));
    const used = process.cpuUsage(cpu);
    return {
      wall: done / ((performance.now() - start) / 1000),
      cpu: done / Math.max(1e-6, (used.user + used.system) / 1e6),
    };
  };
  await run(performance.now() + warmupMs);
  return run(performance.now() + ms);
}

/** Formats ops/s. */
export function rate(opsPerSecond: number): string {
  return `${Math.round(opsPerSecond).toLocaleString("en-US")} ops/s`;
}

/** Throws when `condition` is false: every contender is checked before it is timed. */
export function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`bench correctness check failed: ${what}`);
}

const best = (a: Rate, b: Rate): Rate => ({ wall: Math.max(a.wall, b.wall), cpu: Math.max(a.cpu, b.cpu) });

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** What {@link compare} found: each contender's best run, and the median of the paired rounds' ratios. */
export interface Comparison {
  ours: Rate;
  theirs: Rate;
  /** Median over rounds of ours / theirs, each round's two runs taken back to back. */
  ratio: Rate;
}

/**
 * Times `ours` and `theirs` alternately, `rounds` times each (who goes first alternates too). Keeps
 * each one's best run, and the median of the rounds' ratios: on a shared machine a disturbance
 * hits one run of a round, so the median ratio is steadier than the ratio of two best runs.
 */
export async function compare(
  ours: (i: number) => Promise<unknown> | unknown,
  theirs: (i: number) => Promise<unknown> | unknown,
  options: { ms: number; concurrency?: number; rounds?: number },
): Promise<Comparison> {
  let result = { ours: { wall: 0, cpu: 0 }, theirs: { wall: 0, cpu: 0 } };
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let round = 0; round < (options.rounds ?? 5); round++) {
    let a: Rate;
    let b: Rate;
    if (round % 2 === 0) {
      a = await throughput(ours, options);
      b = await throughput(theirs, options);
    } else {
      b = await throughput(theirs, options);
      a = await throughput(ours, options);
    }
    result = { ours: best(result.ours, a), theirs: best(result.theirs, b) };
    wall.push(a.wall / b.wall);
    cpu.push(a.cpu / b.cpu);
  }
  return { ...result, ratio: { wall: median(wall), cpu: median(cpu) } };
}

/** Checks a store before it is timed: it acquires, completes, and replays `response` whole. */
export async function checkStore(store: IdempotencyStore, response: StoredResponse, name: string): Promise<void> {
  const first = await store.begin("check", "fp", 60_000);
  check(first.kind === "acquired", `${name} begin acquires`);
  check(
    first.kind === "acquired" && (await store.complete("check", first.leaseToken, response, 60_000)),
    `${name} complete`,
  );
  const again = await store.begin("check", "fp", 60_000);
  check(
    again.kind === "completed" && Buffer.from(again.response.body).equals(Buffer.from(response.body)),
    `${name} replay`,
  );
}

/** The store's begin+complete of a first request on the key `tag` + i, as the timed operation. */
export const beginComplete =
  (store: IdempotencyStore, fingerprint: string, response: StoredResponse, tag = "b") =>
  async (i: number): Promise<void> => {
    const key = `${tag}${i}`;
    const found = await store.begin(key, fingerprint, 60_000);
    if (found.kind === "acquired") await store.complete(key, found.leaseToken, response, 60_000);
  };
