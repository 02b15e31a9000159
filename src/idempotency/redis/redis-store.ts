import { optionalFunction } from "../../options/function-option";
import { randomHex } from "../../random/random-id";
import { isNodeRedis, type NodeRedis } from "../../redis/node-redis";
import type { BeginResult, IdempotencyStore, StoredResponse } from "../store";
import {
  checkBeginText,
  checkCompleteText,
  checkLeaseMs,
  checkReleaseText,
  checkStatus,
  checkTtlMs,
} from "../store-arguments";
import { bufferClient, integerReply, keyPrefixOf } from "./ioredis-client";
import { nodeRedisScriptClient } from "./node-redis-client";
import { decodeExisting, encodeCompleted, encodeInProgress, leaseToken, NONCE_LENGTH } from "./record-codec";
import { BEGIN, COMPLETE, COMPLETE_STAGED, RELEASE, type Script } from "./scripts";
import { stagingKey } from "./staging-key";

/**
 * The client method the store uses on ioredis: `callBuffer` (replies as Buffers, so bodies stay
 * binary). An ioredis `Redis` or `Cluster` instance fits, with or without `enableAutoPipelining`, and
 * so does anything with that method.
 */
export interface RedisScriptClient {
  callBuffer(command: string, ...args: (string | Buffer | number)[]): Promise<unknown>;
}

/**
 * A client the store accepts: ioredis 5 or 6 (`Redis`, `Cluster`), or node-redis 4, 5 or 6 (`createClient()`,
 * `createClientPool()`, `createCluster()`), connected.
 */
export type RedisStoreClient = RedisScriptClient | NodeRedis;

/** Options of {@link RedisIdempotencyStore}. */
export interface RedisStoreOptions {
  /**
   * Prefix of every record key (the scoped key follows it).
   * @default "idempotency:"
   */
  prefix?: string;
  /**
   * The clock (epoch milliseconds) that dates a lease and reads another's lease left, for the
   * `Retry-After` of a 409. Redis alone expires leases, so clocks that disagree between instances
   * shift that hint and nothing else.
   * @default Date.now
   */
  now?: () => number;
}

// From this size a completed value is staged with a plain SET rather than passed to the COMPLETE
// script. Redis copies a script's arguments into Lua, which costs it about three times the SET of
// the same bytes; the staging SET costs the client a third command. Measured on Redis 7.0 with
// ioredis: passing the value wins at 4 KiB, they tie at 16 KiB, staging wins at 32 KiB and beyond.
const STAGE_FROM_BYTES = 16_384;
// A staged value is renamed over the record within the same round trip; this only bounds the
// life of one whose script never ran (the connection dropped in between).
const STAGING_MS = 60_000;

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith("NOSCRIPT");
}

// Command names are sent in lower case: ioredis looks each name up in its flag tables several times
// per command, lower-casing it first, and an upper-case name costs a new string every time.

// Redis before 7.0 rejects NX together with GET as a syntax error.
function isSyntaxError(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith("ERR syntax error");
}

// Whether begin found the very lease it wrote: ioredis sends a command again when a dropped connection lost its reply
// (autoResendUnfulfilledCommands, on by default), and the second SET … NX GET then returns the first one's value. The
// token's nonce (deadline and random digits) is this begin's alone, so that lease is this request's to hold.
// Only a lease ("p…", short) is compared: a completed value, however large, is never decoded here.
function isOwn(found: unknown, lease: string): boolean {
  return Buffer.isBuffer(found) && found[0] === 0x70 && found.toString("utf8") === lease;
}

/**
 * A store in Redis, shared by every instance. Each operation is one atomic round trip, `begin`
 * whatever it finds (the first `begin` on a server older than 7.0 excepted: it learns to use the
 * script); Redis expires leases and responses itself (PX).
 * @param client an ioredis `Redis` or `Cluster` (or anything with its `callBuffer`), or a node-redis client, pool
 * or cluster, connected.
 * @example new RedisIdempotencyStore(new Redis(process.env.REDIS_URL))
 * @example new RedisIdempotencyStore(await createClient({ url: process.env.REDIS_URL }).connect())
 * @see https://redis.io/docs/latest/commands/set/ (`SET … NX GET`, Redis 7.0)
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  readonly #client: RedisScriptClient;
  // ioredis's `keyPrefix`: it decides, with the record key, which cluster slot a staging key must be in.
  readonly #keyPrefix: string;
  readonly #prefix: string;
  readonly #now: () => number;
  // Whether a staging SET and the script after it, sent back to back, run in that order (a node-redis pool may send
  // them on two connections, an ioredis Cluster resend one after a redirect).
  readonly #inOrder: boolean;
  // Cleared when the server turns out older than Redis 7.0: begin then always runs its script.
  #setNxGet = true;

  constructor(client: RedisStoreClient, options: RedisStoreOptions = {}) {
    if (isNodeRedis(client)) {
      const adapted = nodeRedisScriptClient(client);
      this.#client = adapted.client;
      this.#inOrder = adapted.inOrder;
      this.#keyPrefix = "";
    } else if (typeof client?.callBuffer === "function") {
      this.#client = bufferClient(client);
      // A Cluster resends a command redirected (MOVED, ASK, a topology refresh) on its own: the SET can then land
      // after the script, which finds nothing staged.
      this.#inOrder = (client as { isCluster?: unknown }).isCluster !== true;
      this.#keyPrefix = keyPrefixOf(client);
    } else {
      throw new TypeError(
        "RedisIdempotencyStore: client must be an ioredis client (it has callBuffer) or a node-redis client (sendCommand)",
      );
    }
    this.#prefix = options.prefix ?? "idempotency:";
    // Checked here, not on the first begin: a number passed for the clock (`now: Date.now()`) failed every request.
    this.#now = optionalFunction("RedisIdempotencyStore", "now", options.now, "a function returning ms") ?? Date.now;
  }

  async begin(key: string, fingerprint: string, leaseMs: number): Promise<BeginResult> {
    checkLeaseMs(leaseMs);
    checkBeginText(key, fingerprint);
    const now = this.#now();
    // The token dates the lease and carries the fingerprint: what SET … NX GET returns is whole.
    const token = leaseToken(fingerprint, leaseMs, now, randomHex(7));
    const lease = encodeInProgress(token);
    const recordKey = this.#prefix + key;
    if (this.#setNxGet) {
      // One plain command, cheaper than a script: it leases a free key, or returns what it found.
      let found: unknown;
      try {
        found = await this.#client.callBuffer("set", recordKey, lease, "PX", leaseMs, "NX", "GET");
      } catch (error) {
        if (!isSyntaxError(error)) throw error;
        this.#setNxGet = false;
        return this.begin(key, fingerprint, leaseMs);
      }
      if (found === null || isOwn(found, lease)) return { kind: "acquired", leaseToken: token };
      return decodeExisting(found, { now, leaseMs });
    }
    // Before Redis 7.0: one script, which also reads the exact lease left (PTTL).
    const found = await this.#run(BEGIN, [1, recordKey, lease, leaseMs]);
    if (integerReply(found) === 0) return { kind: "acquired", leaseToken: token };
    const [existing, pttl] = Array.isArray(found) ? found : [];
    if (isOwn(existing, lease)) return { kind: "acquired", leaseToken: token };
    return decodeExisting(existing, { pttl: integerReply(pttl), now, leaseMs });
  }

  async complete(key: string, leaseToken: string, response: StoredResponse, ttlMs: number): Promise<boolean> {
    checkTtlMs(ttlMs);
    checkStatus(response);
    checkCompleteText(key, leaseToken, response);
    const recordKey = this.#prefix + key;
    const lease = encodeInProgress(leaseToken);
    const value = encodeCompleted(leaseToken, response);
    const staged =
      value.byteLength >= STAGE_FROM_BYTES
        ? stagingKey(recordKey, leaseToken.slice(0, NONCE_LENGTH), this.#keyPrefix)
        : undefined;
    if (staged === undefined) return integerReply(await this.#run(COMPLETE, [1, recordKey, lease, value, ttlMs])) === 1;
    const stage = this.#client.callBuffer("set", staged, value, "PX", STAGING_MS);
    // Sent back to back on one connection, so Redis runs the SET first: still one round trip. Across a pool's
    // connections the script could run first and find nothing staged, so there it waits for the SET.
    if (!this.#inOrder) await stage;
    const [, done] = await Promise.all([stage, this.#run(COMPLETE_STAGED, [2, recordKey, staged, lease, ttlMs])]);
    return integerReply(done) === 1;
  }

  async release(key: string, leaseToken: string): Promise<boolean> {
    checkReleaseText(key, leaseToken);
    return integerReply(await this.#run(RELEASE, [1, this.#prefix + key, encodeInProgress(leaseToken)])) === 1;
  }

  /** EVALSHA of `script` with `args` (the key count, the keys, then the arguments); EVAL when Redis lacks the script. */
  async #run(script: Script, args: (string | Buffer | number)[]): Promise<unknown> {
    try {
      return await this.#client.callBuffer("evalsha", script.sha, ...args);
    } catch (error) {
      // The script cache is empty after a restart or SCRIPT FLUSH: EVAL loads it again.
      if (!isNoScript(error)) throw error;
      return this.#client.callBuffer("eval", script.source, ...args);
    }
  }
}
