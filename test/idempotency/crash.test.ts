/**
 * A process that takes a key and is killed mid-handler: after its lease a retry runs the handler,
 * and the side effect happens once. Leases here are 1.5 s; the test polls, it does not sleep long.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseUrl, redisUrl, skipWithoutPostgres, skipWithoutRedis, uniqueName } from "../support/services";
import { usePostgresEffects } from "./postgres-fixture";
import { type Answer, type Child, post, startServer, stopAll } from "./processes";

const LEASE_MS = "1500";
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Starts a server whose handler hangs and a healthy one; sends the first `key` and kills it once
 * its handler has started. Returns the survivor (started beforehand, so the lease is still live).
 */
async function crashMidHandler(env: Record<string, string>, key: string, running: Child[]): Promise<Child> {
  const [doomed, survivor] = await Promise.all([startServer({ ...env, HANG: "1" }), startServer(env)]);
  running.push(doomed, survivor);
  const lost = post(doomed.port, key).catch(() => undefined);
  await doomed.waitFor("started");
  await stopAll([doomed]);
  expect(await lost).toBeUndefined();
  return survivor;
}

/** Retries until the answer is not 409 (bounded: a few lease lengths). */
async function retryUntilDone(port: number, key: string): Promise<{ first: Answer; conflicts: number }> {
  for (let conflicts = 0; conflicts < 40; conflicts++) {
    const answer = await post(port, key);
    if (answer.status !== 409) return { first: answer, conflicts };
    expect(answer.code).toBe("idempotency_key_in_use");
    expect(Number(answer.retryAfter)).toBeLessThanOrEqual(2);
    await sleep(200);
  }
  throw new Error("the key stayed in use");
}

describe.skipIf(skipWithoutRedis())("crash mid-handler, Redis store", () => {
  const name = uniqueName("idem_crash_redis");
  const env = { STORE: "redis", NAME: name, REDIS_URL: redisUrl as string, LEASE_MS, WORK_MS: "0" };
  let redis: Redis;
  const running: Child[] = [];
  beforeAll(() => {
    redis = new Redis(redisUrl as string);
  });
  afterAll(async () => {
    await stopAll(running);
    const keys = await redis.keys(`${name}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it("answers 409 until the lease expires, then runs the handler once", async () => {
    const survivor = await crashMidHandler(env, "order-crash", running);
    const { first, conflicts } = await retryUntilDone(survivor.port, "order-crash");
    expect([first.status, first.replayed]).toEqual([201, false]);
    expect(conflicts).toBeGreaterThan(0);
    expect(await redis.get(`${name}:effects`)).toBe("1");
    const again = await post(survivor.port, "order-crash");
    expect([again.status, again.replayed, again.body]).toEqual([201, true, first.body]);
  });
});

describe.skipIf(skipWithoutPostgres())("crash mid-handler, PostgreSQL store", () => {
  const name = uniqueName("idem_crash_pg");
  const running: Child[] = [];
  const { effects } = usePostgresEffects(name, () => stopAll(running));

  it("pool: answers 409 until the lease expires, then runs the handler once", async () => {
    const env = { STORE: "postgres", NAME: name, DATABASE_URL: databaseUrl as string, LEASE_MS, WORK_MS: "0" };
    const before = await effects();
    const survivor = await crashMidHandler(env, "order-crash-pool", running);
    const { first, conflicts } = await retryUntilDone(survivor.port, "order-crash-pool");
    expect([first.status, first.replayed]).toEqual([201, false]);
    expect(conflicts).toBeGreaterThan(0);
    expect((await effects()) - before).toBe(1);
    expect((await post(survivor.port, "order-crash-pool")).replayed).toBe(true);
  });

  it("transaction: the rollback undoes the effect and the record, so a retry runs at once", async () => {
    const env = { STORE: "postgres-tx", NAME: name, DATABASE_URL: databaseUrl as string, LEASE_MS, WORK_MS: "0" };
    const before = await effects();
    const survivor = await crashMidHandler(env, "order-crash-tx", running);
    // The retry's INSERT … ON CONFLICT waits on the dead session's uncommitted row until
    // PostgreSQL rolls that session back (its socket closed), then takes the key: no 409.
    const { first, conflicts } = await retryUntilDone(survivor.port, "order-crash-tx");
    expect([first.status, first.replayed, conflicts]).toEqual([201, false, 0]);
    expect((await effects()) - before).toBe(1);
    expect((await post(survivor.port, "order-crash-tx")).replayed).toBe(true);
  });
});
