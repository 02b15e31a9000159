/**
 * The load generator, in its own process: pre-signs POOL deliveries (distinct webhook ids over one
 * body, so every request is a new event until the pool wraps), then runs autocannon against URL.
 * Prints one JSON line: { rps, non2xx, errors, requests, cpuPerRequestNs }, the last the CPU time the server process
 * SERVER_PID spent during the timed run per 2xx answer (../support/server-cpu.ts).
 */
import { createRequire } from "node:module";
import { sign } from "../../src/webhooks/signing/index";
import { serverCpuNs } from "../support/server-cpu";

interface Request {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}
interface Result {
  requests: { average: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  "2xx": number;
}
type Autocannon = (options: Record<string, unknown>) => Promise<Result>;

const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;
const {
  URL: url,
  SECRET,
  BODY_BYTES,
  POOL,
  DURATION,
  CONNECTIONS,
  RUN_ID,
  WARMUP = "1",
  SERVER_PID,
  AMOUNT,
} = process.env;
const timestamp = Math.floor(Date.now() / 1000);
const body = JSON.stringify({ type: "order.shipped", data: { order: "o_1", note: "x".repeat(Number(BODY_BYTES)) } });
const pool: Request[] = [];
for (let i = 0; i < Number(POOL); i++) {
  const id = `msg_${RUN_ID}_${i}`;
  const headers = { "content-type": "application/json", ...sign({ id, timestamp, body, secrets: SECRET as string }) };
  pool.push({ method: "POST", path: "/webhooks", headers, body });
}
let next = 0;
// autocannon passes the request it built (host, port, Host header) and sends what this returns: keep its fields, or
// the Host field goes out as "undefined:undefined" and a server that checks Host answers 400.
const setupRequest = (request: Record<string, unknown>) => ({ ...request, ...pool[next++ % pool.length] });

// AMOUNT (check mode only): that many requests, however long they take, in place of DURATION; a loaded machine
// answered none of the PostgreSQL inbox's requests within 0.3 s, and the check failed on "0 acks".
async function run(duration: number): Promise<Result> {
  return autocannon({
    url,
    connections: Number(CONNECTIONS),
    duration,
    ...(AMOUNT === undefined ? {} : { amount: Number(AMOUNT) }),
    requests: [{ setupRequest }],
  });
}

if (WARMUP !== "0") await run(1); // warm-up: JIT, connection pools, the table's first pages
const cpuBefore = serverCpuNs(Number(SERVER_PID));
const result = await run(Number(DURATION));
const cpu = serverCpuNs(Number(SERVER_PID)) - cpuBefore;
process.stdout.write(
  `${JSON.stringify({
    rps: result.requests.average,
    requests: result["2xx"],
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    cpuPerRequestNs: cpu / result["2xx"],
  })}\n`,
);
