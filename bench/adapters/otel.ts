// bench/adapters, OpenTelemetry: the node adapter in one process (light-my-request, no sockets) serving requests
// through the rate limiter and the idempotency middleware, with rest-webhooks/otel's instrumented versions
// (`instrumentRateLimiter`, `tracedIdempotency`) against the plain ones:
// - with only @opentelemetry/api present (no SDK registered: a no-op meter);
// - with the SDK (a meter provider with a reader exporting to a no-op exporter, passed explicitly).
// Two requests: GET /hello under the rate limit, and POST /orders with a fresh Idempotency-Key (a `new` decision).
// Paired, alternating rounds timed in CPU time; the ratio is the median of per-round ratios (theirs ÷ ours).
// Run alone: node --import ./bench/support/as-built-loader.mjs bench/adapters/otel.ts
import type { IncomingMessage, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type { Meter } from "@opentelemetry/api";
import { ExportResultCode } from "@opentelemetry/core";
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from "@opentelemetry/sdk-metrics";
import { empty, type Handler, json } from "../../src/http/message";
import { idempotency, MemoryIdempotencyStore } from "../../src/idempotency/index";
import { adapt } from "../../src/node/index";
import { instrumentRateLimiter, type TelemetryOptions, tracedIdempotency } from "../../src/otel/index";
import { createRateLimiter, rateLimit } from "../../src/ratelimit/index";

type Listener = (req: IncomingMessage, res: ServerResponse) => void;
type Inject = (
  dispatch: Listener,
  options: { method: string; url: string; headers?: Record<string, string>; payload?: string },
) => Promise<{ statusCode: number; payload: string }>;
// light-my-request comes with Fastify (it is what `fastify.inject` runs); resolved from there.
const inject = createRequire(createRequire(import.meta.url).resolve("fastify"))("light-my-request") as Inject;

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6) * 2;
const REQUESTS = 4_000;

const app: Handler = (request) => {
  if (request.method === "GET" && request.path === "/hello") return json(200, { hello: "world" });
  if (request.method === "POST" && request.path === "/orders") return json(201, { id: "ord_1" });
  return empty(404);
};

/** The node listener of `app` behind the rate limit and the idempotency middleware, plain or instrumented. */
function listener(telemetry: TelemetryOptions | undefined): Listener {
  const plainLimiter = createRateLimiter({ policies: [{ name: "bench", quota: 1_000_000_000, window: 1 }] });
  const limiter = telemetry === undefined ? plainLimiter : instrumentRateLimiter(plainLimiter, telemetry);
  const options = { store: new MemoryIdempotencyStore(), identify: () => "bench" };
  const protect = telemetry === undefined ? idempotency(options) : tracedIdempotency(options, telemetry);
  return adapt(rateLimit({ limiter, key: () => "bench" })(protect(app)));
}

let sequence = 0;
const REQUEST = {
  get: () => ({ method: "GET", url: "/hello" }),
  post: () => ({
    method: "POST",
    url: "/orders",
    headers: { "content-type": "application/json", "idempotency-key": `"k${sequence++}"` },
    payload: '{"sku":"a"}',
  }),
} as const;

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

async function perRequest(server: Listener, kind: keyof typeof REQUEST): Promise<number> {
  const start = cpuMicros();
  for (let i = 0; i < REQUESTS; i++) await inject(server, REQUEST[kind]());
  return (cpuMicros() - start) / REQUESTS;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function compare(label: string, kind: keyof typeof REQUEST, telemetry: TelemetryOptions): Promise<string> {
  const plain = listener(undefined);
  const traced = listener(telemetry);
  // Correctness before timing: the same status from both, and the limiter's fields on the instrumented answer.
  for (const server of [plain, traced]) {
    const response = await inject(server, REQUEST[kind]());
    if (response.statusCode !== (kind === "get" ? 200 : 201)) throw new Error(`${label}: ${response.statusCode}`);
  }
  await perRequest(plain, kind);
  await perRequest(traced, kind);
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      theirs.push(await perRequest(plain, kind));
      ours.push(await perRequest(traced, kind));
    } else {
      ours.push(await perRequest(traced, kind));
      theirs.push(await perRequest(plain, kind));
    }
  }
  const ratio = median(ours.map((micros, i) => (theirs[i] ?? micros) / micros));
  const what = kind === "get" ? "GET /hello, rate-limited" : "POST /orders, new Idempotency-Key";
  console.log(
    `in process, ${what}, ${label}: instrumented ${median(ours).toFixed(1)} µs CPU/request, uninstrumented ${median(theirs).toFixed(1)} µs (${ROUNDS} × ${REQUESTS.toLocaleString("en-US")} requests)`,
  );
  return `ratio: ${what} instrumented (${label}) vs uninstrumented = ${ratio.toFixed(2)}`;
}

const noopExporter: PushMetricExporter = {
  export: (_metrics, done) => done({ code: ExportResultCode.SUCCESS }),
  forceFlush: async () => {},
  shutdown: async () => {},
};

const lines: string[] = [];
// API only first, so the SDK's recording instruments do not warm the shared code before it is measured.
for (const kind of ["get", "post"] as const) lines.push(await compare("API, no SDK", kind, {}));
const meterProvider = new MeterProvider({
  readers: [new PeriodicExportingMetricReader({ exporter: noopExporter, exportIntervalMillis: 1_000 })],
});
const meter: Meter = meterProvider.getMeter("bench");
for (const kind of ["get", "post"] as const) lines.push(await compare("SDK, no-op exporter", kind, { meter }));
await meterProvider.shutdown();
for (const line of lines) console.log(line);
