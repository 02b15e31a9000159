/**
 * The Redis idempotency store (`ioredis` is an optional peer dependency; pass your own client).
 */
export { RedisIdempotencyStore, type RedisScriptClient, type RedisStoreOptions } from "./redis-store";
