/** Throughput of an async check under a fixed number of checks in flight. */

export type Check = (i: number) => Promise<boolean>;

export interface Sample {
  /** Checks per second of wall-clock time. */
  opsPerSecond: number;
  /** This process's CPU time per check (user + system), in µs: steadier than wall time on a busy machine. */
  cpuMicros: number;
}

/** Runs `check` for about `ms` with `inFlight` concurrent loops. */
export async function throughput(check: Check, ms: number, inFlight: number): Promise<Sample> {
  let done = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  const deadline = start + ms;
  async function loop(offset: number): Promise<void> {
    let i = offset;
    while (performance.now() < deadline) {
      // Batches keep the clock read off the hot path.
      for (let j = 0; j < 64; j++) {
        await check(i);
        i += inFlight;
      }
      done += 64;
    }
  }
  await Promise.all(Array.from({ length: inFlight }, (_, k) => loop(k)));
  const elapsed = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { opsPerSecond: (done * 1000) / elapsed, cpuMicros: (used.user + used.system) / done };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

export function geomean(values: number[]): number {
  return Math.exp(values.reduce((sum, value) => sum + Math.log(value), 0) / values.length);
}

export const format = (n: number) => Math.round(n).toLocaleString("en-US").padStart(12);

export interface Contender {
  name: string;
  check: Check;
}

/**
 * Alternates contenders in short rounds (so the load of a shared machine hits both alike); returns the
 * median of each contender's samples.
 */
export async function compare(
  contenders: readonly Contender[],
  options: { rounds: number; sampleMs: number; inFlight: number },
): Promise<Sample[]> {
  for (const contender of contenders) await throughput(contender.check, options.sampleMs * 2, options.inFlight);
  const samples = contenders.map(() => [] as Sample[]);
  for (let round = 0; round < options.rounds; round++) {
    for (const [i, contender] of contenders.entries()) {
      samples[i]?.push(await throughput(contender.check, options.sampleMs, options.inFlight));
    }
  }
  return samples.map((list) => ({
    opsPerSecond: median(list.map((sample) => sample.opsPerSecond)),
    cpuMicros: median(list.map((sample) => sample.cpuMicros)),
  }));
}

/** Prints one case: checks/s and CPU µs per check of each contender, ours first. */
export function report(label: string, names: readonly string[], results: readonly Sample[]): number {
  const [ours] = results as [Sample];
  console.log(`\n${label}:`);
  for (const [i, result] of results.entries()) {
    const vs =
      i === 0
        ? ""
        : `  ours ×${(ours.opsPerSecond / result.opsPerSecond).toFixed(2)} (CPU per check ×${(result.cpuMicros / ours.cpuMicros).toFixed(2)})`;
    console.log(
      `  ${(names[i] ?? "").padEnd(22)} ${format(result.opsPerSecond)}/s ${result.cpuMicros.toFixed(2).padStart(7)} µs CPU${vs}`,
    );
  }
  return ours.opsPerSecond / (results[1] as Sample).opsPerSecond;
}
