import fc from "fast-check";
import { Redis } from "ioredis";
import { Redis as Redis5 } from "ioredis-5";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  compilePolicies,
  createRateLimiter,
  RateLimitError as RateLimitErrorFromIndex,
  type RateLimitStore,
} from "../../src/ratelimit/index";
import { MUL_DIV_CEIL_LUA, NEARER_LUA } from "../../src/ratelimit/redis/gcra-script";
import { createRedisStore, RateLimitError, type RedisScriptClient } from "../../src/ratelimit/redis/index";
import { redisUrl, skipWithoutRedis, uniqueName } from "../support/services";
import { storeContract } from "./store-contract";

const skip = skipWithoutRedis();
const namespace = `${uniqueName("rl_store")}:`;
const ioredis6 = (url: string, options: object) => new Redis(url, options);
// Driven through the calls ioredis 6 has too (evalsha, eval, scan, del, disconnect).
const ioredis5 = (url: string, options: object) => new Redis5(url, options) as unknown as Redis;

async function deleteNamespace(client: Redis): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await client.scan(cursor, "MATCH", `${namespace}*`, "COUNT", 500);
    cursor = next;
    if (keys.length > 0) await client.del(...keys);
  } while (cursor !== "0");
}

function namespaced(store: RateLimitStore): RateLimitStore {
  return { check: (key, set, nowMs) => store.check(namespace + key, set, nowMs) };
}

describe.skipIf(skip)("createRedisStore", () => {
  if (!skip) {
    // The default client, and client options that change what ioredis sends or returns: auto-pipelining (the
    // idempotency store met redis/ioredis#1923 there), and stringNumbers, which returns the script's integers as text.
    // ioredis 5 too, the other major the peer range allows.
    for (const [name, options, connect] of [
      ["redis (caller clock)", {}, ioredis6],
      ["redis, a client with enableAutoPipelining", { enableAutoPipelining: true }, ioredis6],
      ["redis, a client with stringNumbers", { stringNumbers: true }, ioredis6],
      ["redis, ioredis 5 with enableAutoPipelining", { enableAutoPipelining: true }, ioredis5],
    ] as const) {
      storeContract(name, () => {
        const client = connect(redisUrl as string, options);
        return {
          store: namespaced(createRedisStore({ client, clock: "caller" })),
          close: async () => {
            await deleteNamespace(client);
            client.disconnect();
          },
        };
      });
    }
  }

  let client: Redis;
  beforeAll(() => {
    client = new Redis(redisUrl as string);
  });
  afterAll(async () => {
    await deleteNamespace(client);
    client.disconnect();
  });

  it("uses the server's TIME by default, whatever the caller's clock says", async () => {
    const limiter = createRateLimiter({
      policies: [{ name: "p", quota: 2, window: 3_600 }],
      store: createRedisStore({ client }),
      prefix: namespace,
    });
    expect((await limiter.check("server-clock", 0)).allowed).toBe(true);
    expect((await limiter.check("server-clock", 9e12)).allowed).toBe(true); // a far-future caller clock changes nothing
    const refused = await limiter.check("server-clock", 1);
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfterMs).toBeGreaterThan(1_700_000);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(1_800_000);
  });

  it("expires a key once its allowance is full again", async () => {
    const set = compilePolicies([{ name: "p", quota: 10, window: 60 }]);
    const store = createRedisStore({ client });
    await store.check(`${namespace}ttl`, set, 0);
    await store.check(`${namespace}ttl`, set, 0);
    const ttl = await client.pttl(`${namespace}ttl`);
    expect(ttl).toBeGreaterThan(11_000);
    expect(ttl).toBeLessThanOrEqual(12_000);
  });

  // On the caller's clock too the key expires on the server's, once the wait its allowance needs has passed there: the
  // fake time 0 is decades behind the server, and the key still lives 12 s (docs/rate-limits.md, "Clock").
  it("expires a key on the server's clock after the allowance's wait, whichever clock decides", async () => {
    const set = compilePolicies([{ name: "p", quota: 10, window: 60 }]);
    const store = createRedisStore({ client, clock: "caller" });
    await store.check(`${namespace}ttl-caller`, set, 0);
    await store.check(`${namespace}ttl-caller`, set, 0);
    const ttl = await client.pttl(`${namespace}ttl-caller`);
    expect(ttl).toBeGreaterThan(11_000);
    expect(ttl).toBeLessThanOrEqual(12_000);
  });

  // The value written by the script before limits past ticks of 1/quota ms counted in reduced ones: a limit that fits
  // them must keep writing it (a million per hour would fit ticks of 1 ms too; its sub-ms part shows it does not).
  it("writes a limit that fits ticks of 1/quota ms as before, bit for bit", async () => {
    const set = compilePolicies([{ name: "p", quota: 1_000_000, window: 3_600 }]);
    const key = `${namespace}bit-for-bit`;
    // Per script call: whether it ran (an evalsha answered NOSCRIPT did not), and the value read right behind it.
    const values: Promise<[boolean, string | null]>[] = [];
    const readBehind = (reply: Promise<unknown>): Promise<unknown> => {
      const ran = reply.then(
        () => true,
        () => false,
      );
      values.push(Promise.all([ran, client.get(key)]));
      return reply;
    };
    // Regression (a flaky test): each value expires a few real ms after its script (PX from the fake clock's TAT), and
    // under load it was gone before the GET, or before the next check. So the checks and a GET behind each are sent
    // at once, one batch on one connection that Redis runs in order.
    const reading: RedisScriptClient = {
      evalsha: (...args) => readBehind(client.evalsha(...args)),
      eval: (...args) => readBehind(client.eval(...args)),
    };
    const store = createRedisStore({ client: reading, clock: "caller" });
    await client.del(key);
    await store.check(`${key}:warm`, set, 0); // the script cached: each check below is one EVALSHA
    values.length = 0;
    const checks: Promise<unknown>[] = [];
    let now = 1_763_000_000_000;
    for (const gap of [0, 0, 1, 333, 17]) {
      now += gap;
      checks.push(store.check(key, set, now));
    }
    const carried = compilePolicies([
      { name: "a", quota: 11, window: 60 },
      { name: "b", quota: 13, window: 86_400 },
    ]);
    checks.push(store.check(key, carried, now));
    await Promise.all(checks);
    const read = (await Promise.all(values)).filter(([ran]) => ran).map(([, value]) => value);
    expect(read).toEqual([
      "1000000:3600000:1000000 1763000000003 600000",
      "1000000:3600000:1000000 1763000000007 200000",
      "1000000:3600000:1000000 1763000000010 800000",
      "1000000:3600000:1000000 1763000000337 600000",
      "1000000:3600000:1000000 1763000000354 600000",
      "11:60000:11,13:86400000:13 1763000005809 2 1763006646504 11",
    ]);
  });

  // Regression: the script converted a stored sub-ms part to new ticks as ⌈sub · new / old⌉ in doubles, a tick early
  // at times once sub · new passed 2^53; carryState did the same, so the stores agreed on the wrong TAT.
  it("runs muldivceil as exact math does, over every safe integer (a BigInt model)", async () => {
    const max = Number.MAX_SAFE_INTEGER;
    const triple = fc
      .tuple(fc.maxSafeNat(), fc.maxSafeNat(), fc.maxSafeNat(), fc.constantFrom(1, 1_000, 1e15, max - 1))
      .map(([x, b, y, scale]) => {
        const c = (y % scale) + 2; // 2 ≤ c ≤ 2^53 − 1
        return [(x % (c - 1)) + 1, b, c]; // 0 < a < c
      });
    const script = `${MUL_DIV_CEIL_LUA}
      local out = {}
      for i = 1, #ARGV, 3 do
        local a, b, c = tonumber(ARGV[i]), tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
        out[#out + 1] = string.format('%.0f', muldivceil(a, b, c))
      end
      return out`;
    const edges = [
      [1, max, max],
      [max - 1, max, max],
      [max - 2, max - 1, max - 1],
      [1, 0, 2],
      [16_373, 748_040_072_641, 18_637],
    ];
    const cases = [...edges, ...fc.sample(triple, 3_000)];
    const got = (await client.eval(script, 0, ...cases.flat().map(String))) as string[];
    const exact = cases.map(([a, b, c]) => {
      const [x, y, z] = [BigInt(a as number), BigInt(b as number), BigInt(c as number)];
      return String((x * y + z - 1n) / z);
    });
    expect(got).toEqual(exact);
  });

  // Regression: the script found the stored window nearest a new one by comparing products of two windows in doubles,
  // which round equal past 2^53 (windows from ~3 years on): the tie kept the first stored limit, the farther one here.
  it("carries from the stored limit of the nearest window, where window products pass 2^53", async () => {
    const key = `${namespace}nearest-window`;
    const t0 = 1_763_000_000_000;
    // 99,999,999 s and 100,000,001 s; then 100,000,000 s, nearer the second (10^22 − 10^6 < 10^22 ms²).
    await client.set(key, `1:99999999000:1,1:100000001000:1 ${t0 + 1} 0 ${t0 + 2} 0`);
    const after = compilePolicies([{ name: "p", quota: 1, window: 100_000_000, burst: 2 }]);
    expect((await createRedisStore({ client, clock: "caller" }).check(key, after, t0)).allowed).toBe(true);
    expect(await client.get(key)).toBe(`1:100000000000:2 ${t0 + 2 + 100_000_000_000} 0`);
  });

  it("runs nearer as exact math does, over every safe window (a BigInt model)", async () => {
    const max = Number.MAX_SAFE_INTEGER;
    const window = fc.oneof(
      fc.maxSafeNat().map((n) => Math.max(1, n)),
      fc.integer({ min: max - 1_000, max }),
      fc.integer({ min: 1, max: 1_000 }),
    );
    const triple = fc.oneof(
      fc.tuple(window, window, window),
      // a period between two windows d apart: a·b = period² − d², products from 2^53 to near 2^106.
      fc
        .tuple(fc.integer({ min: 94_906_266, max: max - 3 }), fc.integer({ min: 1, max: 3 }))
        .map(([p, d]) => [p, p - d, p + d]),
      // windows k · period and k · period + d: ratios near k.
      fc.tuple(fc.integer({ min: 2, max: 2 ** 26 }), window, fc.integer({ min: -2, max: 2 })).map(([k, x, d]) => {
        const period = Math.max(1, Math.floor(x / k));
        return [period, Math.min(max, period * k), Math.min(max, Math.max(1, period * k + d))];
      }),
    );
    const script = `${NEARER_LUA}
      local out = {}
      for i = 1, #ARGV, 3 do
        out[#out + 1] = nearer(tonumber(ARGV[i]), tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])) and 1 or 0
      end
      return out`;
    const edges = [
      [100_000_000_000, 100_000_001_000, 99_999_999_000],
      [max, max - 1, max - 2],
      [1, max - 1, max],
      [max, 1, 2],
      [2 ** 52, 2 ** 52 + 1, 2 ** 52 + 2],
    ];
    const cases = [...edges, ...fc.sample(triple, 3_000)];
    const got = (await client.eval(script, 0, ...cases.flat().map(String))) as number[];
    const exact = cases.map(([period, a, b]) => {
      const [p, x, y] = [BigInt(period as number), BigInt(a as number), BigInt(b as number)];
      const ratio = (w: bigint): [bigint, bigint] => (w >= p ? [w, p] : [p, w]);
      const [[xHigh, xLow], [yHigh, yLow]] = [ratio(x), ratio(y)];
      return xHigh * yLow < yHigh * xLow ? 1 : 0;
    });
    expect(got).toEqual(exact);
  });

  it("falls back to EVAL when the server answers NOSCRIPT, then uses EVALSHA again", async () => {
    const calls: string[] = [];
    let flushed = true;
    const wrapped: RedisScriptClient = {
      async evalsha(sha, numKeys, ...args) {
        calls.push("evalsha");
        if (flushed) throw new Error("NOSCRIPT No matching script. Please use EVAL.");
        return client.evalsha(sha, numKeys, ...args);
      },
      async eval(script, numKeys, ...args) {
        calls.push("eval");
        flushed = false;
        return client.eval(script, numKeys, ...args);
      },
    };
    const set = compilePolicies([{ name: "p", quota: 1, window: 60 }]);
    const store = createRedisStore({ client: wrapped, clock: "caller" });
    expect((await store.check(`${namespace}noscript`, set, 1_000)).allowed).toBe(true);
    expect((await store.check(`${namespace}noscript`, set, 1_000)).allowed).toBe(false);
    expect(calls).toEqual(["evalsha", "eval", "evalsha"]);
  });

  // Regression: a key was sent as it was, so keys a client chooses (a 16 KB header) each took 16 KB of Redis memory
  // until they expired.
  it("holds a key over 256 characters under its first 256 and its SHA-256, still readable by prefix", async () => {
    const sent: string[] = [];
    const recording: RedisScriptClient = {
      evalsha: (sha, numKeys, key, ...args) => {
        sent.push(String(key));
        return client.evalsha(sha, numKeys, key as string, ...args);
      },
      eval: (script, numKeys, key, ...args) => client.eval(script, numKeys, key as string, ...args),
    };
    const store = createRedisStore({ client: recording, clock: "caller" });
    const set = compilePolicies([{ name: "p", quota: 1, window: 60 }]);
    const long = `${namespace}long:${"x".repeat(16_384)}`;
    expect((await store.check(`${long}a`, set, 0)).allowed).toBe(true);
    expect((await store.check(`${long}b`, set, 0)).allowed).toBe(true);
    expect((await store.check(`${long}a`, set, 0)).allowed).toBe(false);
    const short = `${namespace}${"y".repeat(256 - namespace.length)}`;
    await store.check(short, set, 0);
    expect(sent[3]).toBe(short); // 256 characters: as it is
    expect(sent[0]?.startsWith(long.slice(0, 256))).toBe(true);
    expect(sent[0]?.length).toBe(256 + 1 + 43);
    expect(sent[0]).not.toBe(sent[1]);
    expect(sent[0]).toBe(sent[2]);
  });

  it("passes other errors through", async () => {
    const failing: RedisScriptClient = {
      evalsha: () => Promise.reject(new Error("ECONNREFUSED")),
      eval: () => Promise.reject(new Error("unreachable")),
    };
    const set = compilePolicies([{ name: "p", quota: 1, window: 60 }]);
    await expect(createRedisStore({ client: failing }).check("k", set, 0)).rejects.toThrow("ECONNREFUSED");
  });

  it("fails with store_reply_invalid on a reply the script never gives", async () => {
    const odd: RedisScriptClient = { evalsha: async () => "OK", eval: async () => "OK" };
    const set = compilePolicies([{ name: "p", quota: 1, window: 60 }]);
    const error = await createRedisStore({ client: odd })
      .check("k", set, 0)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toBeInstanceOf(RateLimitErrorFromIndex); // one class, exported from both subpaths
    expect((error as RateLimitError).code).toBe("store_reply_invalid");
  });

  // Regression: any clock but "server" was taken as "caller", so a typo ("sever", "Server") silently put every process
  // on its own clock, the skew the default exists to avoid.
  it.each(["sever", "Server", "client", ""])("refuses clock %j at construction, naming the option", (clock) => {
    const client: RedisScriptClient = { evalsha: async () => [1, 0, 0], eval: async () => [1, 0, 0] };
    expect(() => createRedisStore({ client, clock: clock as never })).toThrow(/createRedisStore: clock must be/);
  });

  it("refuses missing options with a TypeError naming the client", () => {
    expect(() => createRedisStore(undefined as never)).toThrow(/createRedisStore: client must be/);
  });
});

// Regression: only the reply's length was checked, so a reply of the right length with other elements became a
// decision: "x" a NaN that made the headers throw, 1.5 a `r=1.5` Decimal where the draft sends an Integer (draft §4.1),
// 2 a refusal with no wait. Needs no server: the client answers what the test says.
describe("createRedisStore: a reply the script never gives", () => {
  const set = compilePolicies([{ name: "p", quota: 5, window: 10 }]);
  const answering = (reply: unknown): RedisScriptClient => ({ evalsha: async () => reply, eval: async () => reply });

  it.each<[string, unknown[]]>([
    ["a remaining that is not a number", [1, "x", 0]],
    ["a remaining that is not an integer", [1, 1.5, 2_000]],
    ["a negative remaining", [0, -1, 2_000]],
    ["a reset that is not an integer", [1, 4, 2_000.5]],
    ["a reset past the safe integers", [0, 0, 1e300]],
    ["a missing element", [1, null, 2_000]],
    ["an allowed flag other than 0 or 1", [2, 0, 2_000]],
    ["a number in a form other than decimal digits", [1, "0x4", "2e3"]],
  ])("rejects %s with store_reply_invalid", async (_what, reply) => {
    const error = await createRedisStore({ client: answering(reply) })
      .check("k", set, 0)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).code).toBe("store_reply_invalid");
  });

  it.each<[string, unknown[]]>([
    ["numbers", [1, 4, 2_000]],
    ["decimal text (ioredis stringNumbers)", ["1", "4", "2000"]],
  ])("takes integers as %s", async (_what, reply) => {
    const outcome = await createRedisStore({ client: answering(reply) }).check("k", set, 0);
    expect(outcome).toEqual({ allowed: true, remaining: [4], resetMs: [2_000] });
  });
});
