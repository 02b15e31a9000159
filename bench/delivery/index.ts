// bench/delivery: deliveries per second to a local consumer (second process) with the in-memory queue, next to a bare
// keep-alive POST loop at the same concurrency (the limit) and the same loop signing each request afresh (the floor of
// any worker that signs what it sends); the worker's own CPU per delivery; and the heap of 1,000,000 scheduled
// retries; the worker with rest-webhooks/otel's listener against the worker without (otel.ts); a
// healthy endpoint beside 8 hanging ones against it alone (isolation.ts); the PostgreSQL claim with 1k and 1M
// deliveries pending (claim-latency.ts).
//
// Soundness: every contender is checked first (all deliveries arrive, every signature verifies, every event id once);
// a warm-up round of each is discarded; timed rounds take the contenders in turn, the order reversed every other
// round (ABC CBA), so a noisy neighbour hurts all alike; a ratio is the median of the per-round ratios. CPU time per
// request is printed beside the rates: on a shared machine it is the steadier figure.
import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { AS_BUILT } from "../support/as-built";
import { median } from "../support/median";
import { bare, delivery, type Round, type Target } from "./contenders";
import { pgliteBackend, serverBackend } from "./durable";
import { workerOverhead } from "./overhead";

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const CONCURRENCY = [1, 16, 64];
const CHECKED = 300;

const best = (rounds: readonly Round[]) => Math.max(...rounds.map((r) => r.rate));
const field = (rounds: readonly Round[], key: keyof Round) => median(rounds.map((r) => r[key]));

const consumer = spawn(process.execPath, [...AS_BUILT, here("./consumer.ts")], {
  stdio: ["ignore", "inherit", "inherit", "ipc"],
});
const { port } = await new Promise<{ port: number }>((resolve) =>
  consumer.once("message", (m) => resolve(m as { port: number })),
);
const target: Target = { consumer, url: `http://127.0.0.1:${port}/hooks` };

const ratios: string[] = [];
try {
  // Warm-up of both contenders at every concurrency first: the JIT takes many thousand deliveries to settle, and
  // the first level measured must not pay for it.
  for (const c of CONCURRENCY) {
    await bare(target, c, DURATION_MS);
    await delivery(target, c, 3_000);
  }
  for (const c of CONCURRENCY) {
    // Correctness before timing: every delivery arrives once, verified; the bare loop's requests verify too, and the
    // signing loop's each with an id of its own.
    await delivery(target, c, CHECKED, true);
    await bare(target, c, 100, { check: true });
    await bare(target, c, 100, { check: true, signEach: true });
    // One more warm-up round of each at this concurrency, discarded; it also sizes our rounds to about the bare
    // loop's duration.
    const warm = await bare(target, c, DURATION_MS);
    await bare(target, c, DURATION_MS, { signEach: true });
    const count = Math.max(200, Math.round((warm.rate * DURATION_MS) / 1000));
    await delivery(target, c, count);
    const limit: Round[] = [];
    const signing: Round[] = [];
    const ours: Round[] = [];
    // The three contenders in turn, the order reversed every other round (ABC CBA), so none always runs first.
    const contenders = [
      async () => limit.push(await bare(target, c, DURATION_MS)),
      async () => signing.push(await bare(target, c, DURATION_MS, { signEach: true })),
      async () => ours.push(await delivery(target, c, count)),
    ];
    for (let round = 0; round < ROUNDS; round++) {
      for (const run of round % 2 === 0 ? contenders : [...contenders].reverse()) await run();
    }
    const pairs = (a: readonly Round[], b: readonly Round[]) =>
      median(a.map((one, i) => one.rate / (b[i] as Round).rate)).toFixed(2);
    const oursCpu = field(ours, "cpu");
    const bareCpu = field(limit, "cpu");
    const signingCpu = field(signing, "cpu");
    console.log(
      `c=${c}: delivery ${field(ours, "rate").toFixed(0)} deliveries/s (best ${best(ours).toFixed(0)}) · bare keep-alive POST ${field(limit, "rate").toFixed(0)} req/s (best ${best(limit).toFixed(0)}) · the same signing each request ${field(signing, "rate").toFixed(0)} req/s (best ${best(signing).toFixed(0)}) · median of ${ROUNDS} alternating rounds`,
    );
    console.log(
      `c=${c}: CPU per request, sender: delivery ${oursCpu.toFixed(1)} µs · bare ${bareCpu.toFixed(1)} µs (worker adds ${(oursCpu - bareCpu).toFixed(1)} µs) · signing each ${signingCpu.toFixed(1)} µs (signing adds ${(signingCpu - bareCpu).toFixed(1)} µs); consumer ${field(ours, "consumerCpu").toFixed(1)} / ${field(limit, "consumerCpu").toFixed(1)} / ${field(signing, "consumerCpu").toFixed(1)} µs`,
    );
    ratios.push(`ratio: delivery c=${c} vs bare keep-alive POST = ${pairs(ours, limit)}`);
    // Information, no target: what signing each request alone costs the bare loop (the floor of any worker that
    // signs what it sends), and the worker against that floor (its own cost beyond the signature).
    ratios.push(
      `ratio: bare keep-alive POST signing each request c=${c} vs bare keep-alive POST = ${pairs(signing, limit)}`,
    );
    ratios.push(`ratio: delivery c=${c} vs bare keep-alive POST signing each request = ${pairs(ours, signing)}`);
  }

  // The durable queues beside the in-memory one, at c=16 (information, no target): published first, then drained.
  const DURABLE_COUNT = 2_000;
  const durable = [serverBackend(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test")];
  durable.push(await pgliteBackend());
  for (const store of durable) {
    try {
      await delivery(target, 16, CHECKED, true, store.stores); // correctness first
      const pairs: number[] = [];
      const rates: number[] = [];
      for (let round = 0; round < 3; round++) {
        const memory = await delivery(target, 16, DURABLE_COUNT);
        const ours = await delivery(target, 16, DURABLE_COUNT, false, store.stores);
        rates.push(ours.rate);
        pairs.push(ours.rate / memory.rate);
      }
      console.log(
        `c=16: delivery from the ${store.name} queue ${median(rates).toFixed(0)} deliveries/s (${DURABLE_COUNT} published, then drained; median of 3)`,
      );
      ratios.push(`ratio: delivery c=16 on ${store.name} queue vs on memory queue = ${median(pairs).toFixed(2)}`);
    } finally {
      await store.close();
    }
  }
} finally {
  consumer.kill();
}

// The worker alone, no sockets: the steadiest figure of what it adds per delivery.
for (const c of [1, 64]) {
  await workerOverhead(c, 5_000);
  const runs = [];
  for (let i = 0; i < 3; i++) runs.push(await workerOverhead(c, 20_000));
  console.log(`worker c=${c} with a no-op dispatcher: ${median(runs).toFixed(1)} µs CPU per delivery (median of 3)`);
}

const memory = spawnSync(
  process.execPath,
  ["--expose-gc", "--max-old-space-size=2048", ...AS_BUILT, here("./memory.ts")],
  { encoding: "utf8" },
);
if (memory.status !== 0) throw new Error(`memory bench failed: ${memory.stderr}`);
const { scheduled, bytes } = JSON.parse(memory.stdout) as { scheduled: number; bytes: number };
console.log(
  `memory: ${scheduled.toLocaleString("en")} scheduled retries in the in-memory queue = ${(bytes / 2 ** 20).toFixed(0)} MB heap + buffers (${(bytes / scheduled).toFixed(0)} bytes each; target < 500 MB)`,
);
// rest-webhooks/otel's listener on the worker, with the API alone and with the SDK (otel.ts; its own process, so the
// SDK's spans do not warm or pollute the runs above).
const otel = spawnSync(process.execPath, ["--expose-gc", ...AS_BUILT, here("./otel.ts")], { encoding: "utf8" });
if (otel.status !== 0) throw new Error(`otel bench failed: ${otel.stderr}`);
for (const line of otel.stdout.trim().split("\n")) {
  if (line.startsWith("ratio: ")) ratios.push(line);
  else console.log(line);
}
// Issue 15: a healthy endpoint beside 8 that never answer, and the PostgreSQL claim's latency at scale (their own
// processes: the first starts its own consumers, the second fills a table with a million rows).
for (const file of ["./isolation.ts", "./claim-latency.ts", "./undici.ts", "./queue-vs-graphile.ts"]) {
  const run = spawnSync(process.execPath, [...AS_BUILT, here(file)], { encoding: "utf8", env: process.env });
  if (run.status !== 0) throw new Error(`${file} failed: ${run.stderr}`);
  for (const line of run.stdout.trim().split("\n")) {
    if (line.startsWith("ratio: ")) ratios.push(line);
    else console.log(line);
  }
}
for (const line of ratios) console.log(line);
