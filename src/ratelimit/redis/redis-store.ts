import { createHash } from "node:crypto";
import { isNodeRedis, type NodeRedis, nodeRedisSender } from "../../redis/node-redis";
import { RateLimitError } from "../errors";
import type { GcraOutcome } from "../gcra";
import type { RateLimitStore } from "../store";
import { assertStoreKey, assertStoreNow } from "../store-key";
import { GCRA_SCRIPT } from "./gcra-script";

/** The part of an ioredis client (v5 or v6) the store uses; any client with these two commands works. */
export interface RedisScriptClient {
  evalsha(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

/** Options of {@link createRedisStore}. */
export interface RedisStoreOptions {
  /**
   * A connected client: ioredis 5 or 6 (`new Redis(url)`, a `Cluster`), or node-redis 4, 5 or 6 (`createClient()`,
   * `createClientPool()`, `createCluster()`).
   */
  client: RedisScriptClient | NodeRedis;
  /**
   * Whose clock decides: `"server"` uses Redis `TIME` inside the script, so processes with skewed clocks
   * still share one timeline; `"caller"` uses the `nowMs` each check passes, as given, before the epoch too (fake
   * clocks in tests, or callers that already agree on time).
   * @default "server"
   */
  clock?: "server" | "caller";
}

const SHA = createHash("sha1").update(GCRA_SCRIPT).digest("hex");

// Keys up to this many characters are sent as they are.
const MAX_KEY_LENGTH = 256;

/**
 * The Redis key of `key`: itself up to 256 characters; a longer one (a header a client chose, up to 16 KB) as its first
 * 256, a NUL and its SHA-256 (base64url), so that each key costs Redis at most ~300 bytes and stays readable by prefix
 * (and keeps a Cluster hash tag there). Longer than 256, so never equal to a key sent as it is; UTF-8 is lossless
 * (keys are well-formed), and a surrogate pair cut by the 256 is kept whole.
 */
function redisKey(key: string): string {
  if (key.length <= MAX_KEY_LENGTH) return key;
  const last = key.charCodeAt(MAX_KEY_LENGTH - 1);
  const head = key.slice(0, last >= 0xd800 && last <= 0xdbff ? MAX_KEY_LENGTH + 1 : MAX_KEY_LENGTH);
  return `${head}\u0000${createHash("sha256").update(key, "utf8").digest("base64url")}`;
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith("NOSCRIPT");
}

// A bound on the waits the script reports: a TAT is at most a tolerance (< 2^53 ms) past a `now` within ±2^53 ms, so
// it is less than 3 · 2^53 ms after any other such `now` (a clock that stepped back).
const MAX_RESET_MS = 2 ** 55;

/**
 * An element of the script's reply: a non-negative integer up to `max`, as a number or, from an ioredis client with
 * `stringNumbers` set, as its decimal text; `undefined` for anything else. The headers send these as Integers (draft
 * §4.1, RFC 9651 §3.3.1): a NaN made them throw, a 1.5 went out as the Decimal `r=1.5`.
 */
function replyInteger(value: unknown, max: number): number | undefined {
  const number =
    typeof value === "number" ? value : typeof value === "string" && /^\d+$/.test(value) ? Number(value) : -1;
  return Number.isInteger(number) && number >= 0 && number <= max ? number : undefined;
}

function parseReply(reply: unknown, count: number): GcraOutcome {
  const invalid = () =>
    new RateLimitError("store_reply_invalid", "Redis rate limit script returned an unexpected reply");
  if (!Array.isArray(reply) || reply.length !== 1 + 2 * count) throw invalid();
  const allowed = replyInteger(reply[0], 1);
  if (allowed === undefined) throw invalid();
  const remaining = new Array<number>(count);
  const resetMs = new Array<number>(count);
  for (let i = 0; i < count; i++) {
    // The script's remaining is at most the burst, below 2^53.
    const left = replyInteger(reply[1 + 2 * i], Number.MAX_SAFE_INTEGER);
    const reset = replyInteger(reply[2 + 2 * i], MAX_RESET_MS);
    if (left === undefined || reset === undefined) throw invalid();
    remaining[i] = left;
    resetMs[i] = reset;
  }
  return { allowed: allowed === 1, remaining, resetMs };
}

/**
 * The `evalsha` and `eval` the store calls: an ioredis client's own, or the same sent through a node-redis client,
 * pool or cluster, which routes each by its one key.
 */
function scriptClient(client: RedisScriptClient | NodeRedis): RedisScriptClient {
  if (!isNodeRedis(client)) {
    if (typeof client?.evalsha !== "function" || typeof client.eval !== "function") {
      throw new TypeError(
        "createRedisStore: client must be an ioredis client (it has evalsha and eval) or a node-redis client (sendCommand)",
      );
    }
    return client;
  }
  const sender = nodeRedisSender(client);
  return {
    // The script answers integers only: no reply to keep as bytes.
    evalsha: (sha, numKeys, key, ...args) => sender.send(["evalsha", sha, numKeys, key, ...args], String(key), false),
    eval: (script, numKeys, key, ...args) => sender.send(["eval", script, numKeys, key, ...args], String(key), false),
  };
}

/**
 * Creates a store on Redis: one `EVALSHA` per check (falling back to `EVAL` on `NOSCRIPT`), atomic across
 * every process that shares the server; keys expire once their allowance is full again.
 * @param options the connected client, and whose clock decides (`"server"` by default).
 * @throws TypeError when the client has neither `evalsha` and `eval` nor `sendCommand`, or `clock` is neither
 *   `"server"` nor `"caller"`.
 * @example createRateLimiter({ policies, store: createRedisStore({ client: new Redis(process.env.REDIS_URL) }) })
 */
export function createRedisStore(options: RedisStoreOptions): RateLimitStore {
  const client = scriptClient(options?.client);
  // Its own argument, not a sentinel time: a caller's clock is taken as given, before the epoch too.
  const clock = options.clock ?? "server";
  if (clock !== "server" && clock !== "caller") {
    // Any other value was taken as "caller": a typo put each process on its own clock.
    throw new TypeError(`createRedisStore: clock must be "server" or "caller", got ${JSON.stringify(clock)}.`);
  }
  return {
    async check(given, set, nowMs) {
      assertStoreKey(given);
      // Checked whichever clock decides: a store swapped for another must not start failing.
      assertStoreNow(nowMs);
      const key = redisKey(given);
      let reply: unknown;
      try {
        reply = await client.evalsha(SHA, 1, key, nowMs, set.id, clock);
      } catch (error) {
        // The script cache is empty after a restart or SCRIPT FLUSH: EVAL runs and caches it again.
        if (!isNoScript(error)) throw error;
        reply = await client.eval(GCRA_SCRIPT, 1, key, nowMs, set.id, clock);
      }
      return parseReply(reply, set.limits.length);
    },
  };
}
