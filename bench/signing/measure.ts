/**
 * Throughput measurement for the signing bench: interleaved rounds, best round kept. Throughput is per
 * second of this process' CPU time (user + system), so time spent descheduled on a shared machine does not
 * count against whichever contender happened to be running.
 */

export type Contender = () => unknown;
export type AsyncContender = () => Promise<unknown>;

const ROUND_MS = 150;

function cpuSeconds(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1e6;
}

function round(fn: Contender): number {
  let ops = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  let elapsed = 0;
  // Batches of 64 keep the clock reads out of the measurement.
  while (elapsed < ROUND_MS) {
    for (let i = 0; i < 64; i++) fn();
    ops += 64;
    elapsed = performance.now() - start;
  }
  return ops / cpuSeconds(cpu);
}

async function roundAsync(fn: AsyncContender): Promise<number> {
  let ops = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < ROUND_MS) {
    for (let i = 0; i < 64; i++) await fn();
    ops += 64;
    elapsed = performance.now() - start;
  }
  return ops / cpuSeconds(cpu);
}

/**
 * Ops/s of each contender: a warm-up round, then `rounds` rounds taken in turn (so that a burst of load
 * on the shared machine hits every contender alike); the best round of each is kept.
 */
export async function measure(
  contenders: Record<string, Contender | { async: AsyncContender }>,
  rounds = 6,
): Promise<Record<string, number>> {
  const best: Record<string, number> = {};
  const names = Object.keys(contenders);
  for (let r = 0; r <= rounds; r++) {
    for (const name of names) {
      const contender = contenders[name]!;
      const opsPerSecond = typeof contender === "function" ? round(contender) : await roundAsync(contender.async);
      if (r > 0) best[name] = Math.max(best[name] ?? 0, opsPerSecond);
    }
  }
  return best;
}
