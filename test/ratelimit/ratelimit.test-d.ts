import { Redis } from "ioredis";
import type { createClient, createClientPool, createCluster } from "redis";
import type { createClient as createClient4, createCluster as createCluster4 } from "redis-4";
import type { createClient as createClient5, createCluster as createCluster5 } from "redis-5";
import { describe, expectTypeOf, it } from "vitest";
import type { Handler } from "../../src/http/index";
import {
  type ClientIpOptions,
  clientIp,
  createEndpointRateLimiter,
  createMemoryStore,
  createRateLimiter,
  type EndpointRateLimiter,
  type GcraLimit,
  gcraLimit,
  type RateLimitDecision,
  type RateLimitError,
  type RateLimitErrorCode,
  type RateLimitStore,
  rateLimit,
} from "../../src/ratelimit/index";
import type * as redis from "../../src/ratelimit/redis/index";
import { createRedisStore, type RedisScriptClient } from "../../src/ratelimit/redis/index";

describe("ratelimit public types", () => {
  it("gives a GcraLimit's tick units as readonly numbers", () => {
    expectTypeOf(gcraLimit(10_000_000, 2_592_000_000, 10_000_000)).toEqualTypeOf<GcraLimit>();
    expectTypeOf<GcraLimit["ticksPerMs"]>().toEqualTypeOf<number>();
    expectTypeOf<GcraLimit["intervalTicks"]>().toEqualTypeOf<number>();
    const limit = gcraLimit(1, 1_000, 1);
    // @ts-expect-error the units follow from the numbers: not to be set apart from them
    limit.ticksPerMs = 2;
  });

  it("accepts an ioredis client as the Redis client", () => {
    expectTypeOf<Redis>().toMatchTypeOf<RedisScriptClient>();
    expectTypeOf<{ client: RedisScriptClient }>().toMatchTypeOf<redis.RedisStoreOptions>();
    expectTypeOf(createRedisStore({ client: new Redis({ lazyConnect: true }) })).toEqualTypeOf<RateLimitStore>();
  });

  it("accepts node-redis 4, 5 and 6 clients, pools and clusters as the Redis client", () => {
    expectTypeOf<ReturnType<typeof createClient>>().toMatchTypeOf<redis.NodeRedis>();
    expectTypeOf<ReturnType<typeof createClientPool>>().toMatchTypeOf<redis.NodeRedis>();
    expectTypeOf<ReturnType<typeof createCluster>>().toMatchTypeOf<redis.NodeRedis>();
    expectTypeOf<ReturnType<typeof createClient5>>().toMatchTypeOf<redis.NodeRedis>();
    expectTypeOf<ReturnType<typeof createCluster5>>().toMatchTypeOf<redis.NodeRedis>();
    expectTypeOf<ReturnType<typeof createClient4>>().toMatchTypeOf<redis.NodeRedis>();
    expectTypeOf<ReturnType<typeof createCluster4>>().toMatchTypeOf<redis.NodeRedis>();
    expectTypeOf<{ client: ReturnType<typeof createCluster> }>().toMatchTypeOf<redis.RedisStoreOptions>();
    // @ts-expect-error a client needs a way to send commands
    createRedisStore({ client: { get: async () => null } });
  });

  it("keeps the endpoint limiter's exact shape", () => {
    const pacer = createEndpointRateLimiter({ store: createMemoryStore(), burst: 2 });
    expectTypeOf(pacer).toEqualTypeOf<EndpointRateLimiter>();
    expectTypeOf(pacer.acquire("ep", 1, 0)).resolves.toEqualTypeOf<
      { allowed: true } | { allowed: false; retryAtMs: number }
    >();
    // @ts-expect-error the rate is a number of deliveries per second
    pacer.acquire("ep", "1", 0);
  });

  it("wraps a Handler into a Handler", () => {
    const limiter = createRateLimiter({ policies: [{ name: "p", quota: 1, window: 1 }] });
    expectTypeOf(rateLimit({ limiter })).toEqualTypeOf<(handler: Handler) => Handler>();
    expectTypeOf(limiter.check("k", 0)).resolves.toEqualTypeOf<RateLimitDecision>();
    // @ts-expect-error a policy needs a window
    createRateLimiter({ policies: [{ name: "p", quota: 1 }] });
  });

  it("takes ipv6Prefix as a number, maxKeyLength too, and reports keyChars", () => {
    expectTypeOf<ClientIpOptions["ipv6Prefix"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf(clientIp({ headers: {} }, { ipv6Prefix: 56 })).toEqualTypeOf<string | undefined>();
    // @ts-expect-error the prefix is a number of bits
    clientIp({ headers: {} }, { ipv6Prefix: "/64" });
    const store = createMemoryStore({ maxKeys: 10, maxKeyLength: 128 });
    expectTypeOf(store.keyChars).toEqualTypeOf<number>();
    // @ts-expect-error keyChars is read-only
    store.keyChars = 0;
  });

  it("makes decisions read-only values", () => {
    const decision = {} as RateLimitDecision;
    // @ts-expect-error results are read-only
    decision.allowed = true;
    expectTypeOf(decision.results[0]?.remaining).toEqualTypeOf<number | undefined>();
  });

  it("exports RateLimitError and its code union from rest-webhooks/ratelimit, the same class as /redis", () => {
    expectTypeOf<RateLimitErrorCode>().toEqualTypeOf<"store_reply_invalid">();
    expectTypeOf<RateLimitError["code"]>().toEqualTypeOf<RateLimitErrorCode>();
    expectTypeOf<typeof RateLimitError>().toEqualTypeOf<typeof redis.RateLimitError>();
  });
});
