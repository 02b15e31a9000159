// The Redis rate-limit store on a real Redis Cluster (three masters started for this file). A check touches one key,
// so it runs on whichever master holds that key's slot, with the client options that change what ioredis sends.
import type { ClusterOptions } from "ioredis";
import { createCluster } from "redis";
import { describe, expect, it } from "vitest";
import { createRateLimiter, type RateLimitStore } from "../../src/ratelimit/index";
import { createRedisStore } from "../../src/ratelimit/redis/index";
import { skipWithoutRedisCluster, useRedisCluster } from "../support/redis-cluster";
import { uniqueName } from "../support/services";
import { storeContract } from "./store-contract";

describe.skipIf(skipWithoutRedisCluster())("createRedisStore on a Redis Cluster", () => {
  const connect = useRedisCluster();

  const variants: ReadonlyArray<readonly [string, ClusterOptions, (5 | 6)?]> = [
    ["a Cluster (caller clock)", {}],
    ["a Cluster with enableAutoPipelining", { enableAutoPipelining: true }],
    ["a Cluster with a keyPrefix", { keyPrefix: "app:" }],
    ["a Cluster with stringNumbers", { redisOptions: { stringNumbers: true } }],
    [
      "a Cluster of ioredis 5 with a keyPrefix and enableAutoPipelining",
      { keyPrefix: "app:", enableAutoPipelining: true },
      5,
    ],
  ];
  for (const [name, options, major] of variants) {
    storeContract(name, async () => {
      const client = await connect(options, major);
      const namespace = `${uniqueName("rl_cluster")}:`;
      const store = createRedisStore({ client, clock: "caller" });
      const namespaced: RateLimitStore = { check: (key, set, nowMs) => store.check(namespace + key, set, nowMs) };
      return { store: namespaced, close: async () => client.disconnect() };
    });
  }

  // node-redis routes each check by the one key it is given.
  storeContract("a node-redis 6 cluster", async () => {
    const rootNodes = (await connect.nodes()).map(({ host, port }) => ({ url: `redis://${host}:${port}` }));
    const client = createCluster({ rootNodes });
    await client.connect();
    const namespace = `${uniqueName("rl_cluster")}:`;
    const store = createRedisStore({ client, clock: "caller" });
    const namespaced: RateLimitStore = { check: (key, set, nowMs) => store.check(namespace + key, set, nowMs) };
    return { store: namespaced, close: () => client.close() };
  });

  it("limits keys on every master with the server's clock", async () => {
    const client = await connect();
    try {
      const limiter = createRateLimiter({
        policies: [{ name: "p", quota: 2, window: 3_600 }],
        store: createRedisStore({ client }),
        prefix: `${uniqueName("rl_spread")}:`,
      });
      for (let i = 0; i < 30; i++) {
        expect((await limiter.check(`user${i}`, 0)).allowed).toBe(true);
        expect((await limiter.check(`user${i}`, 9e12)).allowed).toBe(true);
        const refused = await limiter.check(`user${i}`, 1);
        expect(refused.allowed).toBe(false);
        expect(refused.retryAfterMs).toBeGreaterThan(1_700_000);
      }
      const sizes = await Promise.all(client.nodes("master").map((node) => node.dbsize()));
      expect(sizes.filter((size) => size > 0)).toHaveLength(3);
    } finally {
      client.disconnect();
    }
  });
});
