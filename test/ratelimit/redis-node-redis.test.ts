// The Redis rate-limit store on node-redis (the `redis` package, 4, 5 and 6): the contract on a client, a pool and a
// RESP3 client, the server's clock, and the script reloaded after NOSCRIPT.
import { Redis } from "ioredis";
import type { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compilePolicies, createRateLimiter, type RateLimitStore } from "../../src/ratelimit/index";
import { createRedisStore, type RedisStoreOptions } from "../../src/ratelimit/redis/index";
import { nodeRedis4, nodeRedis5, nodeRedis6, nodeRedisPool } from "../support/node-redis";
import { redisUrl, skipWithoutRedis, uniqueName } from "../support/services";
import { storeContract } from "./store-contract";

const namespace = `${uniqueName("rl_node_redis")}:`;

function namespaced(store: RateLimitStore): RateLimitStore {
  return { check: (key, set, nowMs) => store.check(namespace + key, set, nowMs) };
}

describe.skipIf(skipWithoutRedis())("createRedisStore on node-redis", () => {
  let plain: Redis;
  beforeAll(() => {
    plain = new Redis(redisUrl as string);
  });
  afterAll(async () => {
    const keys = await plain.keys(`${namespace}*`);
    if (keys.length > 0) await plain.del(...keys);
    plain.disconnect();
  });

  for (const [name, connect] of [
    ["node-redis 6, a client (caller clock)", () => nodeRedis6()],
    ["node-redis 6, a client on RESP3", () => nodeRedis6({ RESP: 3 })],
    ["node-redis 6, a pool", () => nodeRedisPool(6)],
    ["node-redis 5, a client", nodeRedis5],
    ["node-redis 4, a client", () => nodeRedis4()],
    ["node-redis 4, a client in legacy mode", () => nodeRedis4({ legacyMode: true })],
  ] as const) {
    storeContract(name, async () => {
      const { client, close } = await connect();
      return { store: namespaced(createRedisStore({ client, clock: "caller" })), close };
    });
  }

  it("refuses a client that is neither ioredis nor node-redis, naming both", () => {
    const neither = { get: async () => null } as unknown as RedisStoreOptions["client"];
    expect(() => createRedisStore({ client: neither })).toThrow(/ioredis client .*node-redis client/);
  });

  it("uses the server's TIME by default, whatever the caller's clock says", async () => {
    const { client, close } = await nodeRedis6();
    try {
      const limiter = createRateLimiter({
        policies: [{ name: "p", quota: 2, window: 3_600 }],
        store: createRedisStore({ client }),
        prefix: namespace,
      });
      expect((await limiter.check("server-clock", 0)).allowed).toBe(true);
      expect((await limiter.check("server-clock", 9e12)).allowed).toBe(true);
      const refused = await limiter.check("server-clock", 1);
      expect(refused.allowed).toBe(false);
      expect(refused.retryAfterMs).toBeGreaterThan(1_700_000);
    } finally {
      await close();
    }
  });

  it("loads the script again with EVAL after the server forgot it", async () => {
    const { client, close } = await nodeRedis6();
    // A client of its own whose script cache is emptied: SCRIPT FLUSH would disturb the suites sharing this Redis.
    const sent: string[] = [];
    const forgetful = {
      sendCommand(args: ReadonlyArray<string | Buffer>, options?: object) {
        const name = String(args[0]).toLowerCase();
        sent.push(name);
        if (name === "evalsha" && sent.length === 1) {
          return Promise.reject(new Error("NOSCRIPT No matching script. Please use EVAL."));
        }
        return (client as ReturnType<typeof createClient>).sendCommand(args as (string | Buffer)[], options);
      },
    };
    try {
      const store = createRedisStore({ client: forgetful, clock: "caller" });
      const set = compilePolicies([{ name: "p", quota: 1, window: 60 }]);
      expect((await store.check(`${namespace}noscript`, set, 1_000)).allowed).toBe(true);
      expect((await store.check(`${namespace}noscript`, set, 1_000)).allowed).toBe(false);
      expect(sent).toEqual(["evalsha", "eval", "evalsha"]);
    } finally {
      await close();
    }
  });
});
