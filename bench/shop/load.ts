// The load generator of bench/shop, in its own process so it does not share the servers' thread: `node --import
// ./bench/support/as-built-loader.mjs load.ts '<json>'` with {seconds, specs: [{url, method, headers, body, pid}]}
// loads each spec in turn for `seconds` and prints one JSON line: an array of {rps, cpuPerRequestNs, statuses, errors},
// one per spec, where cpuPerRequestNs is the CPU time the server process `pid` spent meanwhile
// (../support/server-cpu.ts), per request answered.
import { createRequire } from "node:module";
import { serverCpuNs } from "../support/server-cpu";

interface Result {
  requests: { total: number };
  errors: number;
  timeouts: number;
  statusCodeStats: Record<string, { count: number }>;
}
type Autocannon = (options: {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  connections: number;
  pipelining: number;
  duration: number;
}) => Promise<Result>;
interface Spec {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  pid: number;
}

const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;
const { seconds, specs } = JSON.parse(process.argv[2] ?? "{}") as { seconds: number; specs: Spec[] };
const out: { rps: number; cpuPerRequestNs: number; statuses: Record<string, number>; errors: number }[] = [];
for (const spec of specs) {
  const cpuBefore = serverCpuNs(spec.pid);
  const result = await autocannon({
    url: spec.url,
    method: spec.method,
    headers: spec.headers,
    ...(spec.body === undefined ? {} : { body: spec.body }),
    connections: 32,
    pipelining: 1,
    duration: seconds,
  });
  const cpu = serverCpuNs(spec.pid) - cpuBefore;
  const statuses: Record<string, number> = {};
  for (const [status, stat] of Object.entries(result.statusCodeStats ?? {})) statuses[status] = stat.count;
  out.push({
    rps: result.requests.total / seconds,
    cpuPerRequestNs: cpu / result.requests.total,
    statuses,
    errors: result.errors + result.timeouts,
  });
}
process.stdout.write(`${JSON.stringify(out)}\n`);
