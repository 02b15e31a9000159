/**
 * The Redis store for `rest-webhooks/ratelimit`: one atomic script round trip per check, shared by every
 * process that uses the same server. It takes an ioredis (5, 6) or node-redis (4, 5, 6) client, pool or cluster.
 */
export type { NodeRedis } from "../../redis/node-redis";
export { RateLimitError, type RateLimitErrorCode } from "../errors";
export { createRedisStore, type RedisScriptClient, type RedisStoreOptions } from "./redis-store";
