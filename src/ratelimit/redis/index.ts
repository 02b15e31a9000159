/**
 * The Redis store for `rest-webhooks/ratelimit`: one atomic script round trip per check, shared by every
 * process that uses the same server. Typed against a minimal client interface; ioredis v5/v6 fits it.
 */
export { RateLimitError, type RateLimitErrorCode } from "../errors";
export { createRedisStore, type RedisScriptClient, type RedisStoreOptions } from "./redis-store";
