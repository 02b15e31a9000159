/**
 * A process that takes a key and is killed mid-request, at each point that matters: before its side
 * effect, after it, and (sharing the business transaction) after `complete` but before COMMIT.
 *
 * - Pool modes (Redis, PostgreSQL in its own statement): after the lease a retry runs the handler.
 *   Killed before the effect, the effect happens once; killed after it, the retry repeats it — the
 *   at-least-once that docs/idempotency.md states for these modes.
 * - Transaction mode: the rollback undoes the effect and the record together, so a retry runs at
 *   once and the effect happens exactly once wherever the process died.
 *
 * Leases are 3 s, long enough that a loaded machine still sees the lease live on the first retry;
 * the test polls, it does not sleep long.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { onServer } from "../support/databases";
import { databaseUrl, redisUrl, skipWithoutRedis, uniqueName } from "../support/services";
import { usePostgresEffects } from "./postgres-fixture";
import { type Answer, type Child, post, startServer, stopAll } from "./processes";

const LEASE_MS = "3000";
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type CrashPoint = "before-effect" | "after-effect" | "before-commit";

/**
 * Starts a server whose handler stops at `point` and a healthy one; sends the first `key` and kills
 * the first server there. Returns the survivor (started beforehand, so the lease is still live).
 */
async function crashAt(point: CrashPoint, env: Record<string, string>, key: string, running: Child[]) {
  const [doomed, survivor] = await Promise.all([startServer({ ...env, HANG: point }), startServer(env)]);
  running.push(doomed, survivor);
  const lost = post(doomed.port, key).catch(() => undefined);
  await doomed.waitFor("started");
  await stopAll([doomed]);
  expect(await lost).toBeUndefined();
  return survivor;
}

/** Retries until the answer is not 409 (bounded: a few lease lengths). */
async function retryUntilDone(port: number, key: string): Promise<{ first: Answer; conflicts: number }> {
  for (let conflicts = 0; conflicts < 60; conflicts++) {
    const answer = await post(port, key);
    if (answer.status !== 409) return { first: answer, conflicts };
    expect(answer.code).toBe("idempotency_key_in_use");
    expect(Number(answer.retryAfter)).toBeLessThanOrEqual(Number(LEASE_MS) / 1000);
    await sleep(200);
  }
  throw new Error("the key stayed in use");
}

/** The retry after the lease runs the handler; returns its answer after checking the replay. */
async function retryAfterLease(survivor: Child, key: string): Promise<Answer> {
  const { first, conflicts } = await retryUntilDone(survivor.port, key);
  expect([first.status, first.replayed]).toEqual([201, false]);
  expect(conflicts).toBeGreaterThan(0);
  const again = await post(survivor.port, key);
  expect([again.status, again.replayed, again.body]).toEqual([201, true, first.body]);
  return first;
}

describe.skipIf(skipWithoutRedis())("crash mid-request, Redis store", () => {
  const name = uniqueName("idem_crash_redis");
  const env = { STORE: "redis", NAME: name, REDIS_URL: redisUrl as string, LEASE_MS, WORK_MS: "0" };
  let redis: Redis;
  const running: Child[] = [];
  const effects = async () => Number((await redis.get(`${name}:effects`)) ?? 0);
  beforeAll(() => {
    redis = new Redis(redisUrl as string);
  });
  afterAll(async () => {
    await stopAll(running);
    const keys = await redis.keys(`${name}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it("killed before the effect: 409 until the lease expires, then the handler runs once", async () => {
    const before = await effects();
    const survivor = await crashAt("before-effect", env, "order-crash", running);
    await retryAfterLease(survivor, "order-crash");
    expect((await effects()) - before).toBe(1);
  });

  it("killed after the effect: the retry after the lease runs the handler again (at least once)", async () => {
    const before = await effects();
    const survivor = await crashAt("after-effect", env, "order-crash-late", running);
    await retryAfterLease(survivor, "order-crash-late");
    expect((await effects()) - before).toBe(2);
  });
});

onServer(
  "crash mid-request, PostgreSQL store",
  () => {
    const name = uniqueName("idem_crash_pg");
    const running: Child[] = [];
    const { effects } = usePostgresEffects(name, () => stopAll(running));
    const pool = { STORE: "postgres", NAME: name, DATABASE_URL: databaseUrl as string, LEASE_MS, WORK_MS: "0" };
    const tx = { ...pool, STORE: "postgres-tx" };

    it("pool, killed before the effect: 409 until the lease expires, then the handler runs once", async () => {
      const before = await effects();
      const survivor = await crashAt("before-effect", pool, "order-pool-early", running);
      await retryAfterLease(survivor, "order-pool-early");
      expect((await effects()) - before).toBe(1);
    });

    it("pool, killed after the effect: the retry after the lease runs the handler again (at least once)", async () => {
      const before = await effects();
      const survivor = await crashAt("after-effect", pool, "order-pool-late", running);
      await retryAfterLease(survivor, "order-pool-late");
      expect((await effects()) - before).toBe(2);
    });

    it.each<[string, CrashPoint]>([
      ["after the effect", "after-effect"],
      ["after complete, before COMMIT", "before-commit"],
    ])(
      "transaction, killed %s: the rollback undoes effect and record, a retry runs at once, exactly once",
      async (_, point) => {
        const key = `order-tx-${point}`;
        const before = await effects();
        const survivor = await crashAt(point, tx, key, running);
        // The retry's INSERT … ON CONFLICT waits on the dead session's uncommitted row until
        // PostgreSQL rolls that session back (its socket closed), then takes the key: no 409.
        const { first, conflicts } = await retryUntilDone(survivor.port, key);
        expect([first.status, first.replayed, conflicts]).toEqual([201, false, 0]);
        expect((await effects()) - before).toBe(1);
        const again = await post(survivor.port, key);
        expect([again.status, again.replayed, again.body]).toEqual([201, true, first.body]);
      },
    );
  },
  "several processes share one database, and PGlite is one process",
);
