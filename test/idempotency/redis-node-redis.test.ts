// The Redis store on node-redis (the `redis` package, 4, 5 and 6): the contract on a client, a pool and a RESP3 client,
// and what differs from ioredis: a pool may send two commands on two connections, and replies are strings unless
// the store asks for bytes.
import { Redis } from "ioredis";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisIdempotencyStore, type RedisStoreClient } from "../../src/idempotency/redis";
import { type NodeRedisConnection, nodeRedis4, nodeRedis5, nodeRedis6, nodeRedisPool } from "../support/node-redis";
import { redisUrl, skipWithoutRedis, uniqueName } from "../support/services";
import { describeStoreContract } from "./store-contract";

const prefix = `${uniqueName("idem_node_redis")}:`;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A node-redis client answering like Redis 6.2, which rejects NX together with GET: begin runs its script. */
async function before7(): Promise<NodeRedisConnection> {
  const client = await createClient({ url: redisUrl }).connect();
  const legacy = {
    sendCommand(args: ReadonlyArray<string | Buffer>, options?: object): Promise<unknown> {
      if (String(args[0]).toLowerCase() === "set" && args.includes("NX") && args.includes("GET")) {
        return Promise.reject(new Error("ERR syntax error"));
      }
      return client.sendCommand(args as (string | Buffer)[], options);
    },
  };
  return { client: legacy, close: () => client.close() };
}

async function cleanup(plain: Redis): Promise<void> {
  const keys = [...(await plain.keys(`${prefix}*`)), ...(await plain.keys(`{${prefix}*`))];
  if (keys.length > 0) await plain.del(...keys);
}

const large = {
  status: 200,
  headers: { "content-type": "application/octet-stream" },
  body: Uint8Array.from({ length: 50_000 }, (_, i) => i % 251),
};

describe.skipIf(skipWithoutRedis())("RedisIdempotencyStore on node-redis", () => {
  let plain: Redis;
  beforeAll(() => {
    plain = new Redis(redisUrl as string);
  });
  afterAll(async () => {
    await cleanup(plain);
    plain.disconnect();
  });

  for (const [name, connect] of [
    ["node-redis 6, a client", () => nodeRedis6()],
    ["node-redis 6, a client on RESP3", () => nodeRedis6({ RESP: 3 })],
    ["node-redis 6, a pool", () => nodeRedisPool(6)],
    ["node-redis 5, a client", nodeRedis5],
    ["node-redis 5, a pool", () => nodeRedisPool(5)],
    ["node-redis 4, a client", () => nodeRedis4()],
    ["node-redis 4, a client in legacy mode", () => nodeRedis4({ legacyMode: true })],
    ["node-redis 6, a server before Redis 7.0 (begin through its script)", before7],
  ] as const) {
    describeStoreContract(
      name,
      async () => {
        const { client, close } = await connect();
        return { store: new RedisIdempotencyStore(client, { prefix }), advance: sleep, close };
      },
      { leaseMs: 150, ttlMs: 300 },
    );
  }

  it.each([
    ["a pool of node-redis 6", () => nodeRedisPool(6)],
    ["a pool of node-redis 5", () => nodeRedisPool(5)],
  ])("completes large responses sent together on %s, each staged before its script runs", async (_, connect) => {
    const { client, close } = await connect();
    try {
      const store = new RedisIdempotencyStore(client, { prefix: `${prefix}${uniqueName("pool")}:` });
      const keys = Array.from({ length: 24 }, (_, i) => `large-${i}`);
      const leases = await Promise.all(
        keys.map(async (key) => {
          const found = await store.begin(key, "fp", 30_000);
          if (found.kind !== "acquired") throw new Error(found.kind);
          return found.leaseToken;
        }),
      );
      const done = await Promise.all(keys.map((key, i) => store.complete(key, leases[i] as string, large, 30_000)));
      expect(done).toEqual(keys.map(() => true));
      for (const key of keys) {
        const replay = await store.begin(key, "fp", 30_000);
        expect(replay.kind === "completed" && Buffer.from(replay.response.body).equals(Buffer.from(large.body))).toBe(
          true,
        );
      }
      expect(await plain.keys(`{${prefix}*`)).toEqual([]);
    } finally {
      await close();
    }
  });

  it.each([
    ["Redis 7.0 and later", () => nodeRedis6()],
    ["Redis 7.0 and later, node-redis 4", () => nodeRedis4()],
    ["before Redis 7.0", before7],
  ])("reads the record node-redis returns as bytes, whatever the body's bytes (%s)", async (_, connect) => {
    const { client, close } = await connect();
    try {
      const store = new RedisIdempotencyStore(client, { prefix });
      const body = Uint8Array.from([0xff, 0xfe, 0x00, 0xc3, 0x28, 0x80]); // not UTF-8
      const key = uniqueName("bytes");
      const found = await store.begin(key, "fp", 5_000);
      if (found.kind !== "acquired") throw new Error(found.kind);
      expect(await store.complete(key, found.leaseToken, { status: 200, headers: {}, body }, 5_000)).toBe(true);
      const replay = await store.begin(key, "fp", 5_000);
      expect(replay.kind === "completed" && [...replay.response.body]).toEqual([...body]);
    } finally {
      await close();
    }
  });

  it("refuses a client that is neither ioredis nor node-redis, naming both", () => {
    expect(() => new RedisIdempotencyStore({ get: async () => null } as unknown as RedisStoreClient)).toThrow(
      /ioredis client .*node-redis client/,
    );
  });
});
