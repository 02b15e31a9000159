/**
 * node-redis connections for the Redis store suites (the `redis` package, 6, and 5 and 4 under the names `redis-5`
 * and `redis-4`), each connected to REDIS_URL and typed as the stores take them.
 */
import { createClient, createClientPool } from "redis";
import { createClient as createClient4 } from "redis-4";
import { createClient as createClient5, createClientPool as createClientPool5 } from "redis-5";
import type { NodeRedis } from "../../src/redis/node-redis";
import { redisUrl } from "./services";

/** A connected node-redis client, pool or cluster, and how to close it. */
export interface NodeRedisConnection {
  client: NodeRedis;
  close(): Promise<void>;
}

/** A node-redis 6 client; `{ RESP: 3 }` speaks RESP3. */
export async function nodeRedis6(options: { RESP?: 3 } = {}): Promise<NodeRedisConnection> {
  const client = await createClient({ url: redisUrl, ...options }).connect();
  return { client, close: () => client.close() };
}

/** A node-redis 5 client. */
export async function nodeRedis5(): Promise<NodeRedisConnection> {
  const client = await createClient5({ url: redisUrl }).connect();
  return { client, close: () => client.close() };
}

/** A node-redis 4 client (bytes through `returnBuffers`, no pools); `legacyMode` keeps its promise API under `v4`. */
export async function nodeRedis4(options: { legacyMode?: true } = {}): Promise<NodeRedisConnection> {
  const client = createClient4({ url: redisUrl, ...options });
  await client.connect();
  if (options.legacyMode) return { client, close: () => client.v4.quit().then(() => undefined) };
  return { client, close: () => client.quit().then(() => undefined) };
}

/** A node-redis pool (6, or 5) with several idle connections, so two commands sent together leave on two of them. */
export async function nodeRedisPool(major: 5 | 6 = 6): Promise<NodeRedisConnection> {
  const pool =
    major === 5
      ? createClientPool5({ url: redisUrl }, { minimum: 4 })
      : createClientPool({ url: redisUrl }, { minimum: 4 });
  await pool.connect();
  return { client: pool, close: () => pool.close() };
}
