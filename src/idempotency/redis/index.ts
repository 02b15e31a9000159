/**
 * The Redis idempotency store, on ioredis or node-redis (both optional peer dependencies; pass your own client).
 */
export type { NodeRedis } from "../../redis/node-redis";
export {
  RedisIdempotencyStore,
  type RedisScriptClient,
  type RedisStoreClient,
  type RedisStoreOptions,
} from "./redis-store";
