// bench/delivery claim latency (issue 15): one claim of 64 from the PostgreSQL queue with 1,000 pending deliveries in
// the table against 1,000,000 (each spread over 1,000 endpoints, all due), and beside an endpoint with 100,000
// deliveries not yet due (a dead endpoint's scheduled retries), which a claim must not scan. Each claim's deliveries
// are handed back (their lease cleared), so every claim sees the same table.
// Two claims of the same work at both sizes: one delivery from each of 64 endpoints (`perEndpoint: 1`, the issue's
// line: the most endpoints a claim of 64 can visit, so the most descents of the larger index), and 16 from each of 4
// (the worker's default room per endpoint, `endpointConcurrency`), with the 1,000 spread over 62 endpoints so that
// each endpoint the claim visits has 16 due, as at 1,000,000.
// Every table is built first, each in a schema of its own; then the cases take turns, one claim each per round in a
// rotating order, so that a machine that speeds up or slows down during the run weighs on every case alike. Medians
// over the rounds. Last, the case once more after REINDEX of both tables: a line without a target, for how
// much of the gap is the layout interleaved inserts leave in the index.
import pg from "pg";
import { migrate } from "../../src/postgres/index";
import {
  createPostgresDeliveryQueue,
  deliveryMigrations,
  type PostgresDeliveryQueue,
} from "../../src/webhooks/delivery/postgres/index";

const url = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const pool = new pg.Pool({ connectionString: url, max: 2 });
const CLAIMS = Number(process.env.BENCH_CLAIMS ?? 300);
const WARM_UP = 20;

const rows = (schema: string, count: number, endpoint: string, dueSql: string) =>
  `INSERT INTO "${schema}".webhook_deliveries (id, event_id, event_type, endpoint_id, payload, created_at, status, attempts, next_attempt_at)
   SELECT 'dlv_' || g || '_' || ${endpoint}, 'evt_' || g || '_' || ${endpoint}, 'order.created', ${endpoint}, '{}', now(), 'pending', 0, ${dueSql}
   FROM generate_series(1, ${count}) g`;
const DUE = "to_timestamp($1::float8 / 1000 - 10)";
const LATER = "to_timestamp($1::float8 / 1000 + 3600)";

interface Table {
  readonly schema: string;
  readonly label: string;
  readonly fill: (schema: string) => readonly string[];
}
const tables = {
  small: {
    schema: "bench_claim_1k",
    label: "1,000 pending over 1,000 endpoints",
    fill: (s) => [rows(s, 1_000, "'we_' || (g % 1000)", DUE)],
  },
  small62: {
    schema: "bench_claim_1k_62",
    label: "1,000 pending over 62 endpoints",
    fill: (s) => [rows(s, 1_000, "'we_' || (g % 62)", DUE)],
  },
  large: {
    schema: "bench_claim_1m",
    label: "1,000,000 pending over 1,000 endpoints",
    fill: (s) => [rows(s, 1_000_000, "'we_' || (g % 1000)", DUE)],
  },
  trap: {
    schema: "bench_claim_trap",
    label: "1,000 pending beside 100,000 not yet due on one endpoint",
    fill: (s) => [rows(s, 1_000, "'we_' || (g % 1000)", DUE), rows(s, 100_000, "'we_0500_dead'", LATER)],
  },
} satisfies Record<string, Table>;

const now = Date.now();

/** The table filled and vacuumed in a fresh schema, with a queue on it. */
async function build(table: Table): Promise<Built> {
  await pool.query(`DROP SCHEMA IF EXISTS "${table.schema}" CASCADE`);
  await migrate(pool, deliveryMigrations({ schema: table.schema }));
  for (const statement of table.fill(table.schema)) await pool.query(statement, [now]);
  await pool.query(`VACUUM ANALYZE "${table.schema}".webhook_deliveries`);
  // BENCH_PREPARE=0: the claim planned on every call, as before the queue prepared it.
  const queue = createPostgresDeliveryQueue({
    client: pool,
    schema: table.schema,
    prepare: process.env.BENCH_PREPARE !== "0",
  });
  return { table, queue };
}

interface Built {
  readonly table: Table;
  readonly queue: PostgresDeliveryQueue;
}

interface Case extends Built {
  readonly perEndpoint: number;
  readonly times: number[];
}

/** One claim of 64 (checked: 64 deliveries from 64 / perEndpoint endpoints), timed, then handed back. */
async function claimOnce({ table, queue, perEndpoint }: Case): Promise<number> {
  const started = performance.now();
  const claims = await queue.claim({ limit: 64, now, leaseMs: 60_000, perEndpoint });
  const took = performance.now() - started;
  if (claims.length !== 64) throw new Error(`${table.label}: claimed ${claims.length}, expected 64`);
  if (new Set(claims.map((c) => c.endpointId)).size !== 64 / perEndpoint) {
    throw new Error(
      `${table.label}: a claim of ${perEndpoint} per endpoint did not take ${64 / perEndpoint} endpoints`,
    );
  }
  await pool.query(
    `UPDATE "${table.schema}".webhook_deliveries SET lease_token = NULL, lease_until = NULL WHERE id = ANY($1)`,
    [claims.map((c) => c.id)],
  );
  return took;
}

/** One claim of each case per round, in a rotating order; the first WARM_UP rounds not kept. */
async function inTurns(cases: readonly Case[]): Promise<void> {
  for (let round = 0; round < WARM_UP + CLAIMS; round++) {
    for (let k = 0; k < cases.length; k++) {
      const one = cases[(round + k) % cases.length] as Case;
      const took = await claimOnce(one);
      if (round >= WARM_UP) one.times.push(took);
    }
  }
}

function median({ table, perEndpoint, times }: Case): number {
  const sorted = [...times].sort((a, b) => a - b);
  const mid = sorted[sorted.length >> 1] as number;
  console.log(
    `claim latency, ${table.label}, ${perEndpoint} per endpoint: median ${mid.toFixed(2)} ms (p90 ${(sorted[Math.floor(sorted.length * 0.9)] as number).toFixed(2)} ms, ${times.length} claims of 64)`,
  );
  return mid;
}

try {
  const builtLarge = await build(tables.large);
  const small: Case = { ...(await build(tables.small)), perEndpoint: 1, times: [] };
  const large: Case = { ...builtLarge, perEndpoint: 1, times: [] };
  const small16: Case = { ...(await build(tables.small62)), perEndpoint: 16, times: [] };
  const large16: Case = { ...builtLarge, perEndpoint: 16, times: [] };
  const trap: Case = { ...(await build(tables.trap)), perEndpoint: 1, times: [] };
  const cases = [small, large, small16, large16, trap];
  await inTurns(cases);
  const [a, b, c, d, e] = cases.map(median) as [number, number, number, number, number];
  // Then the case again on the same two tables with their indexes rebuilt: the 1,000,000 rows were
  // inserted interleaved over 1,000 endpoints, as a backlog builds up, and REINDEX packs each endpoint's entries
  // together. Not a target: it shows how much of the gap is the index's layout rather than its size.
  for (const { table } of [small, large]) {
    await pool.query(`REINDEX TABLE "${table.schema}".webhook_deliveries`);
    await pool.query(`ANALYZE "${table.schema}".webhook_deliveries`);
  }
  const rebuilt = [small, large].map(
    (one): Case => ({ ...one, table: { ...one.table, label: `${one.table.label}, reindexed` }, times: [] }),
  );
  await inTurns(rebuilt);
  const [f, g] = rebuilt.map(median) as [number, number];
  // Throughput-style ratios (above 1: the large table claims faster): the target is within ±20 %, 0.8..1.2.
  console.log(`ratio: claim latency 1M vs 1k = ${(a / b).toFixed(2)}`);
  console.log(`ratio: claim latency 1M vs 1k, 16 per endpoint (the worker's default room) = ${(c / d).toFixed(2)}`);
  console.log(`ratio: claim beside 100k not-yet-due vs 1k = ${(a / e).toFixed(2)}`);
  console.log(`ratio: claim latency 1M vs 1k, both reindexed (the layout's share, no target) = ${(f / g).toFixed(2)}`);
} finally {
  for (const table of Object.values(tables)) await pool.query(`DROP SCHEMA IF EXISTS "${table.schema}" CASCADE`);
  await pool.end();
}
