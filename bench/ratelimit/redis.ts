/** Redis store: rest-webhooks' GCRA script against rate-limiter-flexible's RateLimiterRedis, same ioredis setup. */
import { Redis } from "ioredis";
import { RateLimiterRedis } from "rate-limiter-flexible";
import { createRateLimiter } from "../../src/ratelimit/index";
import { createRedisStore } from "../../src/ratelimit/redis/index";
import { type Contender, compare, report } from "./measure";

const IN_FLIGHT = 32;

interface Case {
  name: string;
  keys: number;
  quota: number;
}

const CASES: Case[] = [
  { name: "admitted, 1 000 keys", keys: 1_000, quota: 1_000_000_000 },
  { name: "refused, 1 hot key over quota", keys: 1, quota: 10 },
];

function contenders(c: Case, ours: Redis, theirs: Redis, prefix: string): Contender[] {
  const keys = Array.from({ length: c.keys }, (_, i) => `user:${i}`);
  const limiter = createRateLimiter({
    policies: [{ name: "minute", quota: c.quota, window: 60 }],
    store: createRedisStore({ client: ours }),
    prefix: `${prefix}ours:${c.quota}:`,
  });
  const rlf = new RateLimiterRedis({
    storeClient: theirs,
    points: c.quota,
    duration: 60,
    keyPrefix: `${prefix}rlf:${c.quota}`,
  });
  return [
    {
      name: "rest-webhooks",
      check: async (i) => (await limiter.check(keys[i % c.keys] as string, 0)).allowed,
    },
    {
      name: "rate-limiter-flexible",
      check: async (i) => {
        try {
          await rlf.consume(keys[i % c.keys] as string);
          return true;
        } catch (rejection) {
          if (rejection instanceof Error) throw rejection; // a Redis failure, not a refusal
          return false;
        }
      },
    },
  ];
}

async function cleanup(client: Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
    cursor = next;
    if (keys.length > 0) await client.del(...keys);
  } while (cursor !== "0");
}

/** Runs the Redis cases (skipped without REDIS_URL); returns our ops/s ÷ theirs per case. */
export async function benchRedis(url: string | undefined): Promise<{ name: string; ratio: number }[]> {
  if (url === undefined) {
    console.log("\n### redis store skipped: REDIS_URL is not set");
    return [];
  }
  const prefix = `bench_rl_${process.pid}_${Date.now().toString(36)}:`;
  // One client each, so neither shares the other's pipeline.
  const ours = new Redis(url);
  const theirs = new Redis(url);
  try {
    for (const contender of contenders({ name: "check", keys: 1, quota: 5 }, ours, theirs, `${prefix}check:`)) {
      const answers: boolean[] = [];
      for (let i = 0; i < 7; i++) answers.push(await contender.check(0));
      if (answers.join() !== "true,true,true,true,true,false,false") {
        throw new Error(`${contender.name} answered ${answers.join()} for 7 checks against a quota of 5`);
      }
    }
    console.log(`\n### redis store (${url}), ${IN_FLIGHT} checks in flight, one ioredis client each`);
    const ratios: { name: string; ratio: number }[] = [];
    for (const c of CASES) {
      const subjects = contenders(c, ours, theirs, prefix);
      const results = await compare(subjects, { rounds: 7, sampleMs: 400, inFlight: IN_FLIGHT });
      ratios.push({
        name: c.name,
        ratio: report(
          `redis/${c.name}`,
          subjects.map((s) => s.name),
          results,
        ),
      });
    }
    return ratios;
  } finally {
    await cleanup(ours, prefix);
    ours.disconnect();
    theirs.disconnect();
  }
}
