/**
 * A small same-process timing harness: contenders run in alternating rounds so that drift in a shared
 * machine's load hits both alike; the median round is reported. Rounds are timed in process CPU time
 * (user + system), which equals wall time on a quiet machine and ignores time spent descheduled on a
 * busy one; the work timed here is synchronous and single-threaded.
 */

let sink = 0;

/** Consumes a result so the optimiser cannot drop the work. */
export function consume(value: unknown): void {
  sink = (sink + (typeof value === "string" ? value.length : value ? 1 : 0)) | 0;
}

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

function round(fn: () => void, minMs: number): number {
  let ops = 0;
  let batch = 1;
  const start = cpuMs();
  let elapsed = 0;
  while (elapsed < minMs) {
    for (let i = 0; i < batch; i++) fn();
    ops += batch;
    elapsed = cpuMs() - start;
    if (elapsed < minMs / 8) batch *= 2;
  }
  return (ops / elapsed) * 1000;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

export interface Comparison {
  label: string;
  peer: string;
  ours: number;
  theirs: number;
}

/** Times `ours` against `theirs` in alternating rounds; returns ops/s for each. */
export function compare(
  label: string,
  peer: string,
  ours: () => void,
  theirs: () => void,
  rounds = 5,
  minMs = 150,
): Comparison {
  // Warm both up so neither is timed while still being compiled.
  round(ours, 50);
  round(theirs, 50);
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < rounds; i++) {
    // Alternate who goes first, so neither always runs right after the other's garbage.
    if (i % 2 === 0) {
      a.push(round(ours, minMs));
      b.push(round(theirs, minMs));
    } else {
      b.push(round(theirs, minMs));
      a.push(round(ours, minMs));
    }
  }
  const result = { label, peer, ours: median(a), theirs: median(b) };
  console.log(
    `${label.padEnd(34)} ours ${format(result.ours).padStart(12)} ops/s   ${peer} ${format(result.theirs).padStart(12)} ops/s   x${(result.ours / result.theirs).toFixed(2)}`,
  );
  return result;
}

function format(opsPerSecond: number): string {
  return Math.round(opsPerSecond).toLocaleString("en-US");
}

/** The closing line the bench runner reads: `ratio: <case> vs <peer> = <number>`. */
export function ratioLine(c: Comparison): string {
  return `ratio: ${c.label} vs ${c.peer} = ${(c.ours / c.theirs).toFixed(2)}`;
}

/** Exposes the sink so it is observably used. */
export function sinkValue(): number {
  return sink;
}
