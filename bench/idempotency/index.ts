/**
 * bench/idempotency: begin+complete per second for each store, next to the bare client doing the
 * same round trips (the limit), so the ratio is our overhead. Bodies graded by size.
 * Redis and PostgreSQL run when REDIS_URL / DATABASE_URL are set (defaults: the local services); embedded PGlite
 * always runs too (information: one connection, in this process).
 */
import type { StoredResponse } from "../../src/idempotency";
import { benchMemory } from "./memory";
import { benchNodeRedis } from "./node-redis";
import { benchPostgres, pgliteDatabase, serverDatabase } from "./postgres";
import { benchRedis } from "./redis";

const MS = 1000;
const CONCURRENCY = 16;
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const databaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

function response(size: number): StoredResponse {
  return {
    status: 201,
    headers: { "content-type": "application/json", location: "/orders/ord_1" },
    body: new TextEncoder().encode(JSON.stringify({ id: "ord_1", pad: "x".repeat(Math.max(0, size - 24)) })),
  };
}

const sizes = [64, 16_384];
console.log(
  `idempotency stores: begin+complete on fresh keys, 5 alternating rounds of ${MS} ms runs (best run shown; ratios: median of the per-round ratios), ${CONCURRENCY} in flight for Redis/PostgreSQL`,
);
const ratios: string[] = [];
const fmt = (n: number) => n.toFixed(2);

// The store keeps a reference to the response, so the body's size does not matter to it; the
// bound does (a larger live set costs the garbage collector more): the default and ten times it.
for (const maxEntries of [10_000, 100_000]) {
  const m = await benchMemory(response(sizes[0] as number), MS, maxEntries);
  const label = `memory begin+complete (${maxEntries.toLocaleString("en-US")} entries${maxEntries === 10_000 ? ", the default" : ""})`;
  ratios.push(`ratio: ${label} vs 1M ops/s target = ${fmt(m.ours.wall / 1_000_000)}`);
  ratios.push(`ratio: ${label} (CPU time) vs 1M ops/s target = ${fmt(m.ours.cpu / 1_000_000)}`);
  ratios.push(`ratio: ${label} (CPU time) vs bare Map = ${fmt(m.ratio.cpu)}`);
  ratios.push(
    `ratio: bare Map (${maxEntries.toLocaleString("en-US")} entries, CPU time) vs 1M ops/s target = ${fmt(m.bare.cpu / 1_000_000)}`,
  );
}
for (const size of sizes) {
  const r = await benchRedis(redisUrl, response(size), MS, CONCURRENCY);
  const suffix = size === sizes[0] ? "" : ` (${size} B)`;
  ratios.push(`ratio: redis begin+complete${suffix} vs raw ioredis (fenced) = ${fmt(r.ratio)}`);
  ratios.push(
    `ratio: redis begin+complete${suffix} vs raw ioredis SET NX + SET XX (unfenced) = ${fmt(r.unfencedRatio)}`,
  );
  const n = await benchNodeRedis(redisUrl, response(size), MS, CONCURRENCY);
  ratios.push(`ratio: redis begin+complete on node-redis${suffix} vs raw node-redis (fenced) = ${fmt(n.ratio)}`);
  ratios.push(`ratio: redis begin+complete on node-redis${suffix} vs the same on ioredis = ${fmt(n.ours / r.ours)}`);
}
// The server, then embedded PGlite (information, no target: one connection, in this process).
const server: number[] = [];
for (const database of [serverDatabase(databaseUrl, CONCURRENCY), await pgliteDatabase()]) {
  const peer = database.name === "postgres" ? "raw pg" : "raw PGlite";
  try {
    for (const [i, size] of sizes.entries()) {
      const p = await benchPostgres(database, response(size), MS, CONCURRENCY);
      const label = `begin+complete${size === sizes[0] ? "" : ` (${size} B)`}`;
      ratios.push(`ratio: ${database.name} ${label} vs ${peer} = ${fmt(p.ratio)}`);
      if (database.name === "postgres") server[i] = p.ours;
      else ratios.push(`ratio: pglite ${label} vs postgres server ${label} = ${fmt(p.ours / (server[i] as number))}`);
    }
  } finally {
    await database.close();
  }
}
console.log("");
for (const line of ratios) console.log(line);
