// bench/ratelimit: checks per second of rest-webhooks' rate limiter against rate-limiter-flexible on the
// same store, one process: RateLimiterMemory for the in-memory store, RateLimiterRedis (ioredis) for Redis
// with the same number of checks in flight. Answers are checked before timing. Ratios: geometric mean
// of the cases. Redis cases need REDIS_URL (default redis://127.0.0.1:6379).
import { geomean } from "./measure";
import { benchMemory } from "./memory";
import { benchRedis } from "./redis";

console.log(`node ${process.version}; rate-limiter-flexible 11; policies: one "minute" policy per limiter`);
const memory = await benchMemory();
const redis = await benchRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");

console.log("");
console.log(`ratio: memory check vs rate-limiter-flexible = ${geomean(memory).toFixed(2)}`);
if (redis.length > 0) console.log(`ratio: redis check vs rate-limiter-flexible = ${geomean(redis).toFixed(2)}`);
