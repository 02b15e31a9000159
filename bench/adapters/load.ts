// The load generator for bench/adapters, run in its own process so it does not share the servers' CPU thread: `node
// --import ./bench/support/as-built-loader.mjs load.ts <url> <seconds>` prints one JSON line with requests/s.
import { createRequire } from "node:module";

interface Result {
  requests: { average: number; total: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  pipelining: number;
  duration: number;
}) => Promise<Result>;

const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;
const [url, seconds] = process.argv.slice(2);
if (url === undefined || seconds === undefined) throw new Error("usage: load.ts <url> <seconds>");
const result = await autocannon({ url, connections: 50, pipelining: 1, duration: Number(seconds) });
process.stdout.write(
  `${JSON.stringify({
    rps: result.requests.total / Number(seconds),
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  })}\n`,
);
