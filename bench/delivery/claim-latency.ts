// bench/delivery claim latency (issue 15): one claim of 64 from the PostgreSQL queue with 1,000 pending deliveries in
// the table against 1,000,000 (each spread over 1,000 endpoints, all due), and beside an endpoint with 100,000
// deliveries not yet due (a dead endpoint's scheduled retries), which a claim must not scan. Median of many claims;
// each claim's deliveries are handed back (their lease cleared), so every claim sees the same table.
import pg from "pg";
import { migrate } from "../../src/postgres/index";
import { createPostgresDeliveryQueue, deliveryMigrations } from "../../src/webhooks/delivery/postgres/index";

const url = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const pool = new pg.Pool({ connectionString: url, max: 2 });
const schema = "bench_claim_latency";
const CLAIMS = Number(process.env.BENCH_CLAIMS ?? 200);

const rows = (count: number, endpoint: string, dueSql: string) =>
  `INSERT INTO "${schema}".webhook_deliveries (id, event_id, event_type, endpoint_id, payload, created_at, status, attempts, next_attempt_at)
   SELECT 'dlv_' || g || '_' || ${endpoint}, 'evt_' || g || '_' || ${endpoint}, 'order.created', ${endpoint}, '{}', now(), 'pending', 0, ${dueSql}
   FROM generate_series(1, ${count}) g`;

async function median(label: string, fill: readonly string[]): Promise<number> {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await migrate(pool, deliveryMigrations({ schema }));
  const now = Date.now();
  for (const statement of fill) await pool.query(statement, [now]);
  await pool.query(`VACUUM ANALYZE "${schema}".webhook_deliveries`);
  // BENCH_PREPARE=0: the claim planned on every call, as before the queue prepared it.
  const queue = createPostgresDeliveryQueue({ client: pool, schema, prepare: process.env.BENCH_PREPARE !== "0" });
  const times: number[] = [];
  for (let i = 0; i < CLAIMS + 20; i++) {
    const started = performance.now();
    const claims = await queue.claim({ limit: 64, now, leaseMs: 60_000, perEndpoint: 1 });
    const took = performance.now() - started;
    if (claims.length !== 64) throw new Error(`${label}: claimed ${claims.length}, expected 64`);
    if (i >= 20) times.push(took);
    await pool.query(
      `UPDATE "${schema}".webhook_deliveries SET lease_token = NULL, lease_until = NULL WHERE id = ANY($1)`,
      [claims.map((c) => c.id)],
    );
  }
  times.sort((a, b) => a - b);
  const mid = times[times.length >> 1] as number;
  console.log(
    `claim latency, ${label}: median ${mid.toFixed(2)} ms (p90 ${(times[Math.floor(times.length * 0.9)] as number).toFixed(2)} ms, ${CLAIMS} claims of 64)`,
  );
  return mid;
}

const due = "to_timestamp($1::float8 / 1000 - 10)";
try {
  const small = await median("1,000 pending over 1,000 endpoints", [rows(1_000, "'we_' || (g % 1000)", due)]);
  const large = await median("1,000,000 pending over 1,000 endpoints", [rows(1_000_000, "'we_' || (g % 1000)", due)]);
  const trap = await median("1,000 pending beside 100,000 not yet due on one endpoint", [
    rows(1_000, "'we_' || (g % 1000)", due),
    rows(100_000, "'we_0500_dead'", "to_timestamp($1::float8 / 1000 + 3600)"),
  ]);
  // Throughput-style ratios (above 1: the large table claims faster): the target is within ±20 %, 0.8..1.2.
  console.log(`ratio: claim latency 1M vs 1k = ${(small / large).toFixed(2)}`);
  console.log(`ratio: claim beside 100k not-yet-due vs 1k = ${(small / trap).toFixed(2)}`);
} finally {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
}
