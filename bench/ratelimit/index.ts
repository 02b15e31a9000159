// bench/ratelimit: checks per second of rest-webhooks' rate limiter against rate-limiter-flexible on the
// same store, one process: RateLimiterMemory for the in-memory store, RateLimiterRedis (ioredis) for Redis
// with the same number of checks in flight. Answers are checked before timing. Ratios: geometric mean
// of the cases. Redis cases need REDIS_URL (default redis://127.0.0.1:6379).
import { createRequire } from "node:module";
import { geomean } from "./measure";
import { benchMemory } from "./memory";
import { benchRedis } from "./redis";

const peer = createRequire(import.meta.url)("rate-limiter-flexible/package.json") as { version: string };
console.log(
  `node ${process.version}; rate-limiter-flexible ${peer.version}; policies: one "minute" policy per limiter`,
);
const memory = await benchMemory();
const redis = await benchRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");

console.log("");
for (const [store, cases] of [
  ["memory", memory],
  ["redis", redis],
] as const) {
  if (cases.length === 0) continue;
  for (const { name, ratio } of cases) {
    console.log(`ratio: ${store}/${name} vs rate-limiter-flexible = ${ratio.toFixed(2)}`);
  }
  console.log(
    `ratio: ${store} check (geometric mean) vs rate-limiter-flexible = ${geomean(cases.filter((c) => !("inMean" in c) || c.inMean).map((c) => c.ratio)).toFixed(2)}`,
  );
}
