// The in-process half of bench/adapters: `node --import ./bench/support/as-built-loader.mjs in-process.ts <ours>
// <peer>` drives both servers' request listeners with light-my-request (Fastify's own `inject`, no sockets) in one
// process, in paired, alternating rounds timed in process CPU time, and prints one `ratio:` line (their CPU per request
// ÷ ours). Without the kernel's TCP work and a load generator on the same cores, what is left is what the servers do.
import { createRequire } from "node:module";
import { isDeepStrictEqual } from "node:util";
import { listenerOf, SERVERS, type ServerKind } from "./servers";

type Listener = Awaited<ReturnType<typeof listenerOf>>["listener"];
type Inject = (
  dispatch: Listener,
  options: { method: string; url: string },
) => Promise<{ statusCode: number; payload: string }>;
// light-my-request comes with Fastify (it is what `fastify.inject` runs); resolved from there.
const inject = createRequire(createRequire(import.meta.url).resolve("fastify"))("light-my-request") as Inject;

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6) * 2;
const REQUESTS = 4_000;

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

async function perRequest(listener: Listener, url: string): Promise<number> {
  const start = cpuMicros();
  for (let i = 0; i < REQUESTS; i++) await inject(listener, { method: "GET", url });
  return (cpuMicros() - start) / REQUESTS;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

const [oursKind, peerKind] = process.argv.slice(2) as [ServerKind, ServerKind];
if (!(oursKind in SERVERS) || !(peerKind in SERVERS)) throw new Error("usage: in-process.ts <ours> <peer>");
const ours = await listenerOf(oursKind);
const peer = await listenerOf(peerKind);
// Correctness before timing: the same status and JSON from both.
const answers = await Promise.all(
  [ours, peer].map(async (s) => {
    const response = await inject(s.listener, { method: "GET", url: s.path });
    return { status: response.statusCode, body: JSON.parse(response.payload) as unknown };
  }),
);
if (!isDeepStrictEqual(answers[0], answers[1]) || answers[0]?.status !== 200) {
  throw new Error(`the two answer differently: ${JSON.stringify(answers)}`);
}
await perRequest(ours.listener, ours.path); // warm-up
await perRequest(peer.listener, peer.path);
const oursRounds: number[] = [];
const peerRounds: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  if (round % 2 === 0) {
    oursRounds.push(await perRequest(ours.listener, ours.path));
    peerRounds.push(await perRequest(peer.listener, peer.path));
  } else {
    peerRounds.push(await perRequest(peer.listener, peer.path));
    oursRounds.push(await perRequest(ours.listener, ours.path));
  }
}
const ratio = median(oursRounds.map((micros, i) => (peerRounds[i] ?? micros) / micros));
console.log(
  `in process (light-my-request), ${ROUNDS} × ${REQUESTS.toLocaleString("en-US")} requests each: ${SERVERS[oursKind]} ${median(oursRounds).toFixed(1)} µs CPU/request, ${SERVERS[peerKind]} ${median(peerRounds).toFixed(1)} µs`,
);
console.log(`ratio: ${SERVERS[oursKind]} (in process) vs ${SERVERS[peerKind]} = ${ratio.toFixed(2)}`);
