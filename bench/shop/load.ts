// The load generator of bench/shop, in its own process so it does not share the servers' thread:
// `node --import tsx load.ts '<json>'` with {seconds, specs: [{url, method, headers, body}]} loads each spec in
// turn for `seconds` and prints one JSON line: an array of {rps, statuses, errors}, one per spec.
import { createRequire } from "node:module";

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
}

const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;
const { seconds, specs } = JSON.parse(process.argv[2] ?? "{}") as { seconds: number; specs: Spec[] };
const out: { rps: number; statuses: Record<string, number>; errors: number }[] = [];
for (const spec of specs) {
  const result = await autocannon({
    url: spec.url,
    method: spec.method,
    headers: spec.headers,
    ...(spec.body === undefined ? {} : { body: spec.body }),
    connections: 32,
    pipelining: 1,
    duration: seconds,
  });
  const statuses: Record<string, number> = {};
  for (const [status, stat] of Object.entries(result.statusCodeStats ?? {})) statuses[status] = stat.count;
  out.push({ rps: result.requests.total / seconds, statuses, errors: result.errors + result.timeouts });
}
process.stdout.write(`${JSON.stringify(out)}\n`);
