import { Redis } from "ioredis";
import { Redis as Redis5 } from "ioredis-5";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json } from "../../src/http";
import { IdempotencyError, idempotency, scopedKey } from "../../src/idempotency";
import { legacyRequestFingerprint } from "../../src/idempotency/fingerprint";
import type { RedisScriptClient } from "../../src/idempotency/redis";
import { RedisIdempotencyStore } from "../../src/idempotency/redis";
import { BEGIN } from "../../src/idempotency/redis/scripts";
import { redisUrl, skipWithoutRedis, uniqueName } from "../support/services";
import { describeStoreContract } from "./store-contract";
import { bodyText, request } from "./support";

const prefix = `${uniqueName("idem_redis")}:`;
const ioredis6 = (url: string, options: object) => new Redis(url, options);
// Driven through the calls ioredis 6 has too (callBuffer, keys, del, disconnect).
const ioredis5 = (url: string, options: object) => new Redis5(url, options) as unknown as Redis;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// Record keys start with the prefix; staging keys (large responses) wrap the record key in "{…}".
async function ownKeys(client: Redis): Promise<string[]> {
  return [...(await client.keys(`${prefix}*`)), ...(await client.keys(`{${prefix}*`))];
}

async function cleanup(client: Redis): Promise<void> {
  const keys = await ownKeys(client);
  if (keys.length > 0) await client.del(...keys);
}

/** A client answering like Redis 6.2, which rejects NX together with GET; counts the rejections. */
function beforeRedis7(client: Redis): RedisScriptClient & { rejected: number } {
  const wrapper = {
    rejected: 0,
    callBuffer(command: string, ...args: (string | Buffer | number)[]): Promise<unknown> {
      if (command.toUpperCase() === "SET" && args.includes("NX") && args.includes("GET")) {
        wrapper.rejected++;
        return Promise.reject(new Error("ERR syntax error"));
      }
      return client.callBuffer(command, ...args);
    },
  };
  return wrapper;
}

/** A client that counts the commands it sends: one command is one round trip. */
function counting(client: Redis): RedisScriptClient & { commands: string[] } {
  const wrapper = {
    commands: [] as string[],
    callBuffer(command: string, ...args: (string | Buffer | number)[]): Promise<unknown> {
      wrapper.commands.push(command.toUpperCase());
      return client.callBuffer(command, ...args);
    },
  };
  return wrapper;
}

const large = {
  status: 200,
  headers: { "content-type": "application/octet-stream" },
  body: Uint8Array.from({ length: 50_000 }, (_, i) => i % 251),
};

describe.skipIf(skipWithoutRedis())("RedisIdempotencyStore", () => {
  // The default client, and client options that change what ioredis sends or returns: callBuffer drops the command's
  // name under auto-pipelining (redis/ioredis#1923); stringNumbers returns integer replies as text.
  // ioredis 5, the other major the peer range allows, with and without auto-pipelining.
  for (const [name, options, connect] of [
    ["redis", {}, ioredis6],
    ["redis, a client with enableAutoPipelining", { enableAutoPipelining: true }, ioredis6],
    ["redis, a client with stringNumbers", { stringNumbers: true }, ioredis6],
    ["redis, ioredis 5", {}, ioredis5],
    ["redis, ioredis 5 with enableAutoPipelining", { enableAutoPipelining: true }, ioredis5],
  ] as const) {
    describeStoreContract(
      name,
      async () => {
        const client = connect(redisUrl as string, options);
        return {
          store: new RedisIdempotencyStore(client, { prefix }),
          advance: sleep,
          close: async () => {
            await cleanup(client);
            client.disconnect();
          },
        };
      },
      { leaseMs: 150, ttlMs: 300 },
    );
  }

  // ioredis writes its keyPrefix before every key, the staging key's included: both must stay in one cluster slot.
  const keyPrefix = `${uniqueName("idem_kp")}:`;
  describeStoreContract(
    "redis, a client with a keyPrefix",
    async () => {
      const client = new Redis(redisUrl as string, { keyPrefix });
      const plain = new Redis(redisUrl as string);
      return {
        store: new RedisIdempotencyStore(client, { prefix }),
        advance: sleep,
        close: async () => {
          // KEYS does not apply the prefix; every key this client wrote starts with it, staged ones included.
          const keys = await plain.keys(`${keyPrefix}*`);
          if (keys.length > 0) await plain.del(...keys);
          client.disconnect();
          plain.disconnect();
        },
      };
    },
    { leaseMs: 150, ttlMs: 300 },
  );

  // The script's reply holds integers too (0 for a free key, the PTTL), as text under stringNumbers.
  for (const stringNumbers of [false, true]) {
    let legacy: ReturnType<typeof beforeRedis7> | undefined;
    describeStoreContract(
      `redis before 7.0 (begin through its script)${stringNumbers ? ", a client with stringNumbers" : ""}`,
      async () => {
        const client = new Redis(redisUrl as string, { stringNumbers });
        legacy = beforeRedis7(client);
        return {
          store: new RedisIdempotencyStore(legacy, { prefix }),
          advance: sleep,
          close: async () => {
            // The store asked once, then kept to the script.
            expect(legacy?.rejected).toBe(1);
            await cleanup(client);
            client.disconnect();
          },
        };
      },
      { leaseMs: 150, ttlMs: 300 },
    );
  }

  describe("Redis specifics", () => {
    let client: Redis;
    beforeAll(() => {
      client = new Redis(redisUrl as string);
    });
    afterAll(async () => {
      await cleanup(client);
      client.disconnect();
    });

    it("leaves the expiry to Redis: the record key carries a PX TTL", async () => {
      const store = new RedisIdempotencyStore(client, { prefix });
      await store.begin("ttl-check", "fp", 5000);
      const pttl = await client.pttl(`${prefix}ttl-check`);
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(5000);
    });

    describe("begin is one round trip, whatever it finds", () => {
      it.each([
        ["Redis 7.0 and later", (c: Redis) => c, ["SET"]],
        ["before 7.0, once the server is known", beforeRedis7, ["EVALSHA"]],
      ] as const)("%s", async (_, wrap, command) => {
        const sent = counting(client);
        const server = wrap(sent as unknown as Redis);
        const store = new RedisIdempotencyStore(server, { prefix });
        // The first call on an older server finds out that SET … NX GET is refused.
        await store.begin("round-trip-probe", "fp", 5000);
        const outcome = async (k: string, fp: string) => {
          sent.commands.length = 0;
          const found = await store.begin(k, fp, 5000);
          expect(sent.commands).toEqual(command);
          return found;
        };
        const acquired = await outcome("round-trip", "fp");
        expect(acquired.kind).toBe("acquired");
        expect((await outcome("round-trip", "fp")).kind).toBe("in-progress");
        expect((await outcome("round-trip", "fp-other")).kind).toBe("in-progress");
        if (acquired.kind !== "acquired") return;
        await store.complete(
          "round-trip",
          acquired.leaseToken,
          { status: 201, headers: {}, body: new Uint8Array(1) },
          5000,
        );
        expect((await outcome("round-trip", "fp")).kind).toBe("completed");
        await client.del(`${prefix}round-trip`, `${prefix}round-trip-probe`);
      });
    });

    // Regression: ioredis resends a command whose reply a dropped connection lost (autoResendUnfulfilledCommands, on
    // by default). A begin whose SET had leased the key then found its own lease: 409 to the request that held it, and
    // to every retry until the lease ran out, while the handler never ran.
    describe("a begin sent again after its reply was lost", () => {
      /** A client that sends each begin twice and answers with the second reply, as ioredis does after a reconnect. */
      function resending(inner: Redis): RedisScriptClient {
        return {
          async callBuffer(command: string, ...args: (string | Buffer | number)[]): Promise<unknown> {
            const isBegin =
              (command === "set" && args.includes("GET")) || args[0] === BEGIN.sha || args[0] === BEGIN.source;
            if (isBegin) await inner.callBuffer(command, ...args);
            return inner.callBuffer(command, ...args);
          },
        };
      }

      it.each([
        ["Redis 7.0 and later", (c: RedisScriptClient) => c],
        ["before 7.0", (c: RedisScriptClient) => beforeRedis7(c as unknown as Redis)],
      ] as const)("%s: acquires the lease it took, and no other", async (_, wrap) => {
        const store = new RedisIdempotencyStore(wrap(resending(client)), { prefix });
        const found = await store.begin("resent", "fp", 5000);
        expect(found.kind).toBe("acquired");
        if (found.kind !== "acquired") return;
        // Another begin, resent or not, still finds the key in progress.
        expect((await store.begin("resent", "fp", 5000)).kind).toBe("in-progress");
        const response = { status: 201, headers: {}, body: new Uint8Array([1]) };
        expect(await store.complete("resent", found.leaseToken, response, 5000)).toBe(true);
        expect((await store.begin("resent", "fp", 5000)).kind).toBe("completed");
        await client.del(`${prefix}resent`);
      });
    });

    it("reads the lease left from the record itself, on the holder's clock", async () => {
      let now = 1_700_000_000_000;
      const store = new RedisIdempotencyStore(client, { prefix, now: () => now });
      expect((await store.begin("lease-left", "fp", 30_000)).kind).toBe("acquired");
      now += 12_345;
      expect(await store.begin("lease-left", "fp", 30_000)).toEqual({
        kind: "in-progress",
        fingerprint: "fp",
        retryAfterMs: 17_655,
      });
      // A reader whose clock is far off still gets a hint within [0, the lease].
      now -= 3_600_000;
      expect(await store.begin("lease-left", "fp", 30_000)).toMatchObject({ retryAfterMs: 30_000 });
      now += 7_200_000;
      expect(await store.begin("lease-left", "fp", 30_000)).toMatchObject({ retryAfterMs: 0 });
    });

    it("writes leases that 0.1 reads: the fingerprint after a 36-character nonce", async () => {
      const store = new RedisIdempotencyStore(client, { prefix });
      const found = await store.begin("v02-lease", "fp-new", 5000);
      if (found.kind !== "acquired") throw new Error(found.kind);
      const value = await client.getBuffer(`${prefix}v02-lease`);
      expect(value?.toString("latin1", 0, 1)).toBe("p");
      expect(value?.toString("utf8", 37)).toBe("fp-new");
      expect(value?.toString("latin1", 1)).toBe(found.leaseToken);
    });

    it("loads a script with EVAL when the server answers NOSCRIPT (after a restart or SCRIPT FLUSH)", async () => {
      // A wrapper instead of a real SCRIPT FLUSH, which would disturb other suites sharing this Redis.
      let noscript = 0;
      const forgetful = {
        callBuffer: (command: string, ...args: (string | Buffer | number)[]) => {
          if (command.toUpperCase() !== "EVALSHA") return client.callBuffer(command, ...args);
          noscript++;
          return Promise.reject(new Error("NOSCRIPT No matching script. Please use EVAL."));
        },
      };
      const store = new RedisIdempotencyStore(forgetful, { prefix });
      for (const [k, stored] of [
        ["after-flush", { status: 201, headers: {}, body: new Uint8Array([1, 2, 3]) }],
        ["after-flush-large", large],
      ] as const) {
        const found = await store.begin(k, "fp", 5000);
        if (found.kind !== "acquired") throw new Error(found.kind);
        expect(await store.complete(k, found.leaseToken, stored, 5000)).toBe(true);
        const replay = await store.begin(k, "fp", 5000);
        expect(replay.kind === "completed" && Buffer.from(replay.response.body).equals(stored.body)).toBe(true);
      }
      expect(noscript).toBe(2);
    });

    it("stages a large response and leaves no staging key behind, completed or refused", async () => {
      const store = new RedisIdempotencyStore(client, { prefix });
      const done = await store.begin("staged", "fp", 5000);
      const refused = await store.begin("staged-refused", "fp", 5000);
      if (done.kind !== "acquired" || refused.kind !== "acquired") throw new Error("not acquired");
      expect(await store.complete("staged", done.leaseToken, large, 5000)).toBe(true);
      expect(await store.complete("staged-refused", `${refused.leaseToken}x`, large, 5000)).toBe(false);
      expect(await client.keys(`{${prefix}*`)).toEqual([]);
      // The record carries the response's TTL, not the staging one.
      const pttl = await client.pttl(`${prefix}staged`);
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(5000);
    });

    it.each([
      ["a hash-tagged prefix (staged beside the tag)", "{idem_tag}:"],
      ['a prefix with a stray "}" (no staging key possible: passed to the script)', "idem}stray:"],
    ])("stores and replays a large response under %s", async (_, tagPrefix) => {
      const p = `${prefix}${tagPrefix}`;
      const store = new RedisIdempotencyStore(client, { prefix: p });
      const found = await store.begin("k", "fp", 5000);
      if (found.kind !== "acquired") throw new Error(found.kind);
      expect(await store.complete("k", found.leaseToken, large, 5000)).toBe(true);
      const replay = await store.begin("k", "fp", 5000);
      expect(replay.kind === "completed" && Buffer.from(replay.response.body).equals(large.body)).toBe(true);
      expect(await client.keys(`*${prefix}*:staged:*`)).toEqual([]);
    });

    it.each([
      ["a byte order mark", '\uFEFF{"a":1}'],
      ["multibyte characters (2, 3 and 4 bytes)", "é€😀 ✓"],
      ["a large multibyte body (staged)", "€😀".repeat(20_000)],
    ])("replays a UTF-8 body with %s byte for byte, fingerprint and headers too", async (_, text) => {
      const store = new RedisIdempotencyStore(client, { prefix });
      const key = `utf8-${text.length}-${text.codePointAt(0)}`;
      const body = new TextEncoder().encode(text);
      const found = await store.begin(key, "fp-é😀", 5000);
      if (found.kind !== "acquired") throw new Error(found.kind);
      expect(await store.complete(key, found.leaseToken, { status: 200, headers: { "x-é": "😀" }, body }, 5000)).toBe(
        true,
      );
      const replay = await store.begin(key, "fp-é😀", 5000);
      if (replay.kind !== "completed") throw new Error(replay.kind);
      expect(replay.fingerprint).toBe("fp-é😀");
      expect(replay.response.headers).toEqual({ "x-é": "😀" });
      expect(Buffer.from(replay.response.body).equals(Buffer.from(body))).toBe(true);
    });

    it("reads the records 0.1 wrote (the value layouts are unchanged)", async () => {
      const store = new RedisIdempotencyStore(client, { prefix });
      const uuid = "0b6f3c2e-3d4f-4a5b-8c7d-9e0f1a2b3c4d";
      await client.set(`${prefix}v01-lease`, `p${uuid}fp-old`, "PX", 5000);
      // A 0.1 lease carries no deadline: the lease asked for is the hint (an upper bound).
      expect(await store.begin("v01-lease", "fp-old", 5000)).toEqual({
        kind: "in-progress",
        fingerprint: "fp-old",
        retryAfterMs: 5000,
      });
      const meta = JSON.stringify({ s: 201, h: { location: "/o/1" } });
      await client.set(`${prefix}v01-done`, `c6:fp-old${meta.length}:${meta}body`, "PX", 5000);
      const found = await store.begin("v01-done", "fp-old", 5000);
      expect(found).toMatchObject({ kind: "completed", fingerprint: "fp-old", response: { status: 201 } });
      expect(found.kind === "completed" && Buffer.from(found.response.body).toString()).toBe("body");
    });

    it("answers retries of requests 0.1 recorded as 0.1 did: 409 while its lease runs, then the replay", async () => {
      const store = new RedisIdempotencyStore(client, { prefix });
      const handle = idempotency({ store, identify: () => "acct_1" })(() => json(500, {}));
      const body = '{"sku":"a"}';
      const fingerprint = legacyRequestFingerprint({
        method: "POST",
        target: "/orders",
        caller: "acct_1",
        body: new TextEncoder().encode(body),
      });
      const uuid = "0b6f3c2e-3d4f-4a5b-8c7d-9e0f1a2b3c4d";
      // The values as 0.1 laid them out: a lease with a UUID nonce, then a completed record.
      await client.set(`${prefix}${scopedKey("acct_1", "v01-lease")}`, `p${uuid}${fingerprint}`, "PX", 5000);
      expect((await handle(request({ key: "v01-lease", body }))).status).toBe(409);
      expect((await handle(request({ key: "v01-lease", body: "{}" }))).status).toBe(422);
      const meta = JSON.stringify({ s: 201, h: { location: "/o/1" } });
      const done = `c${fingerprint.length}:${fingerprint}${meta.length}:${meta}{"id":1}`;
      await client.set(`${prefix}${scopedKey("acct_1", "v01-done")}`, done, "PX", 5000);
      const replay = await handle(request({ key: "v01-done", body }));
      expect(replay.status).toBe(201);
      expect(replay.headers).toMatchObject({ location: "/o/1", "idempotent-replayed": "true" });
      expect(bodyText(replay.body)).toBe('{"id":1}');
      expect((await handle(request({ key: "v01-done", body: "{}" }))).status).toBe(422);
    });

    // Regression: a replayed header whose list held a number (a JavaScript handler's `vary: ["accept", 5]`) was
    // written to Redis, which reads back only strings: every retry's begin threw idempotency_record_invalid (500)
    // until the record expired, 24 h by default. The memory store replayed it.
    it("never stores a header list it cannot read back: the retry is not a 500", async () => {
      const store = new RedisIdempotencyStore(client, { prefix });
      const errors: unknown[] = [];
      const handle = idempotency({ store, identify: () => "acct_1", onStoreError: (e) => errors.push(e) })(() =>
        json(201, { id: 1 }, { vary: ["accept", 5] as never }),
      );
      expect((await handle(request({ key: "header-list" }))).status).toBe(201);
      expect(errors).toEqual([expect.any(TypeError)]);
      // Nothing stored: the key stays leased (409) until leaseMs runs out, as after any failed write.
      expect((await handle(request({ key: "header-list" }))).status).toBe(409);
    });

    it("refuses a bad leaseMs or ttlMs before sending any command", async () => {
      const sent: string[] = [];
      const store = new RedisIdempotencyStore({ callBuffer: async (command) => sent.push(command) }, { prefix });
      await expect(store.begin("k", "fp", 0)).rejects.toThrow(TypeError);
      await expect(store.complete("k", "token", large, 1.5)).rejects.toThrow(TypeError);
      expect(sent).toEqual([]);
    });

    it("passes other errors through", async () => {
      const failing = {
        callBuffer: () => Promise.reject(new Error("READONLY You can't write against a read only replica.")),
      };
      const store = new RedisIdempotencyStore(failing, { prefix });
      await expect(store.begin("readonly", "fp", 5000)).rejects.toThrow(/READONLY/);
    });

    // Nothing listens on port 1: the client refuses at once (no offline queue, no retry), as a Redis that is down.
    it("through the middleware, a Redis that cannot be reached is a 503 the client may retry, reported", async () => {
      const down = new Redis("redis://127.0.0.1:1", {
        lazyConnect: true,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      const errors: unknown[] = [];
      let ran = 0;
      const handle = idempotency({
        store: new RedisIdempotencyStore(down, { prefix }),
        identify: () => "a",
        onStoreError: (error) => errors.push(error),
      })(() => {
        ran++;
        return json(201, {});
      });
      try {
        const res = await handle(request({ key: '"down"' }));
        expect(res.status).toBe(503);
        expect(res.headers["retry-after"]).toBe("1");
        expect(JSON.parse(bodyText(res.body)).code).toBe("idempotency_store_unavailable");
        expect(errors).toHaveLength(1);
        expect(ran).toBe(0);
      } finally {
        down.disconnect();
      }
    });

    it("throws idempotency_record_invalid for a value it did not write", async () => {
      const store = new RedisIdempotencyStore(client, { prefix });
      for (const garbage of ["c2:fp4:nope", "c99:fp", "x", "p-short", 'c2:fp11:{"s":"201"}']) {
        await client.set(`${prefix}garbage`, garbage, "PX", 5000);
        const error = await store.begin("garbage", "fp", 5000).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(IdempotencyError);
        expect((error as IdempotencyError).code).toBe("idempotency_record_invalid");
      }
    });

    it("rejects something that is not a Redis client", () => {
      expect(() => new RedisIdempotencyStore({} as never)).toThrow(TypeError);
    });

    // Regression: a clock given as a number was first called by begin, so every request failed (500).
    it("rejects a clock that is not a function when it is made", () => {
      expect(() => new RedisIdempotencyStore(client, { now: Date.now() as never })).toThrow(/now/);
    });
  });
});
