/**
 * 4 Node processes × 50 concurrent requests with the same key on one shared store: the handler's
 * side effect happens exactly once; every other answer is the replay or a 409. The handler holds
 * its key until other requests are in flight beside it, and reports how many were: a run in which
 * the requests did not contend fails.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { onServer } from "../support/databases";
import { databaseUrl, redisUrl, skipWithoutRedis, uniqueName } from "../support/services";
import { usePostgresEffects } from "./postgres-fixture";
import { type Answer, type Child, post, startServer, stopAll } from "./processes";

const PROCESSES = 4;
const PER_PROCESS = 50;
// The executing handler holds until this many other requests are in flight in its process, or
// WORK_MS runs out (then `overlapping` falls short and the test fails).
const OVERLAP = 5;
const CHILD_ENV = { WORK_MS: "15000", OVERLAP: String(OVERLAP) };

function expectExactlyOnce(answers: Answer[]): void {
  expect(answers).toHaveLength(PROCESSES * PER_PROCESS);
  const executed = answers.filter((a) => a.status === 201 && !a.replayed);
  expect(executed).toHaveLength(1);
  const original = executed[0] as Answer;
  // Contention: other requests with this key were in flight while the first one was, and (below)
  // each of them got a 409 or the replay, never a second execution.
  expect(JSON.parse(original.body).overlapping).toBeGreaterThanOrEqual(OVERLAP);
  for (const a of answers) {
    if (a === original) continue;
    if (a.status === 409) expect(a.code).toBe("idempotency_key_in_use");
    else
      expect({ status: a.status, replayed: a.replayed, body: a.body }).toEqual({
        status: 201,
        replayed: true,
        body: original.body,
      });
  }
}

async function storm(children: Child[], key: string): Promise<Answer[]> {
  return Promise.all(children.flatMap((c) => Array.from({ length: PER_PROCESS }, () => post(c.port, key))));
}

async function startMany(env: Record<string, string>): Promise<Child[]> {
  return Promise.all(Array.from({ length: PROCESSES }, () => startServer(env)));
}

describe.skipIf(skipWithoutRedis())("4 processes × 50 requests, one key, Redis store", () => {
  const name = uniqueName("idem_conc_redis");
  let redis: Redis;
  let children: Child[] = [];
  beforeAll(async () => {
    redis = new Redis(redisUrl as string);
    children = await startMany({ STORE: "redis", NAME: name, REDIS_URL: redisUrl as string, ...CHILD_ENV });
  });
  afterAll(async () => {
    await stopAll(children);
    const keys = await redis.keys(`${name}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it("runs the side effect exactly once", async () => {
    const answers = await storm(children, "order-1");
    expectExactlyOnce(answers);
    expect(await redis.get(`${name}:effects`)).toBe("1");
    const late = await post((children[3] as Child).port, "order-1");
    expect([late.status, late.replayed]).toEqual([201, true]);
  });
});

onServer(
  "4 processes × 50 requests, one key, PostgreSQL store",
  () => {
    const name = uniqueName("idem_conc_pg");
    const running: Child[] = [];
    const { effects } = usePostgresEffects(name, () => stopAll(running));

    it.each([
      ["pool: the record in its own statement", "postgres", "order-pool"],
      ["transaction: the record shares the business transaction", "postgres-tx", "order-tx"],
    ])("%s: runs the side effect exactly once", async (_, store, key) => {
      const before = await effects();
      const children = await startMany({ STORE: store, NAME: name, DATABASE_URL: databaseUrl as string, ...CHILD_ENV });
      running.push(...children);
      const answers = await storm(children, key);
      expectExactlyOnce(answers);
      expect((await effects()) - before).toBe(1);
      await stopAll(children);
    });
  },
  "several processes share one database, and PGlite is one process",
);
