// The Redis store on a real Redis Cluster (three masters started for this file): what the docs promise of an ioredis
// `Cluster`, with the client options that change the keys it sends (keyPrefix), how it sends them (auto-pipelining)
// and what it returns (stringNumbers). Every key of one operation must hash to one slot, or Redis answers CROSSSLOT.
import type { ClusterOptions } from "ioredis";
import { createCluster } from "redis";
import { createCluster as createCluster4 } from "redis-4";
import { createCluster as createCluster5 } from "redis-5";
import { describe, expect, it } from "vitest";
import { RedisIdempotencyStore } from "../../src/idempotency/redis";
import { skipWithoutRedisCluster, useRedisCluster } from "../support/redis-cluster";
import { uniqueName } from "../support/services";
import { describeStoreContract } from "./store-contract";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe.skipIf(skipWithoutRedisCluster())("RedisIdempotencyStore on a Redis Cluster", () => {
  const connect = useRedisCluster();

  const variants: ReadonlyArray<readonly [string, ClusterOptions, (5 | 6)?]> = [
    ["a Cluster", {}],
    ["a Cluster with enableAutoPipelining", { enableAutoPipelining: true }],
    ["a Cluster with a keyPrefix", { keyPrefix: "app:" }],
    [
      "a Cluster with a hash-tagged keyPrefix and enableAutoPipelining",
      { keyPrefix: "{app}:", enableAutoPipelining: true },
    ],
    ["a Cluster with stringNumbers", { redisOptions: { stringNumbers: true } }],
    [
      "a Cluster of ioredis 5 with a keyPrefix and enableAutoPipelining",
      { keyPrefix: "app:", enableAutoPipelining: true },
      5,
    ],
  ];
  for (const [name, options, major] of variants) {
    describeStoreContract(
      name,
      async () => {
        const client = await connect(options, major);
        return {
          store: new RedisIdempotencyStore(client, { prefix: `${uniqueName("idem_cluster")}:` }),
          advance: sleep,
          close: async () => {
            client.disconnect();
          },
        };
      },
      { leaseMs: 150, ttlMs: 300 },
    );
  }

  // node-redis routes each command by the key it is given: the store names the record key, whose slot the staging
  // key shares.
  type RootNodes = { url: string }[];
  const cluster6 = async (rootNodes: RootNodes) => {
    const client = await createCluster({ rootNodes }).connect();
    return { client, close: () => client.close() };
  };
  const cluster5 = async (rootNodes: RootNodes) => {
    const client = await createCluster5({ rootNodes }).connect();
    return { client, close: () => client.close() };
  };
  const cluster4 = async (rootNodes: RootNodes) => {
    const client = createCluster4({ rootNodes });
    await client.connect();
    return { client, close: () => client.quit().then(() => undefined) };
  };
  for (const [name, connectNodeRedis] of [
    ["a node-redis 6 cluster", cluster6],
    ["a node-redis 5 cluster", cluster5],
    ["a node-redis 4 cluster", cluster4],
  ] as const) {
    describeStoreContract(
      name,
      async () => {
        const rootNodes = (await connect.nodes()).map(({ host, port }) => ({ url: `redis://${host}:${port}` }));
        const { client, close } = await connectNodeRedis(rootNodes);
        return {
          store: new RedisIdempotencyStore(client, { prefix: `${uniqueName("idem_cluster")}:` }),
          advance: sleep,
          close,
        };
      },
      { leaseMs: 150, ttlMs: 300 },
    );
  }

  it("spreads records over every master, and keeps a large response's staging in its record's slot", async () => {
    const client = await connect({ keyPrefix: "app:" });
    try {
      const store = new RedisIdempotencyStore(client, { prefix: `${uniqueName("idem_spread")}:` });
      const body = Uint8Array.from({ length: 40_000 }, (_, i) => i % 253);
      for (let i = 0; i < 30; i++) {
        const key = `k${i}`;
        const begun = await store.begin(key, "fp", 5_000);
        if (begun.kind !== "acquired") throw new Error(`expected acquired, got ${begun.kind}`);
        expect(await store.complete(key, begun.leaseToken, { status: 201, headers: {}, body }, 60_000)).toBe(true);
        const found = await store.begin(key, "fp", 5_000);
        expect(found.kind === "completed" && Buffer.from(found.response.body).equals(Buffer.from(body))).toBe(true);
      }
      const sizes = await Promise.all(client.nodes("master").map((node) => node.dbsize()));
      expect(sizes.filter((size) => size > 0)).toHaveLength(3);
    } finally {
      client.disconnect();
    }
  });
});
