/**
 * The Redis store against the bare client doing what a correct hand-written store must: SET NX GET PX
 * (lease a free key, or read what holds it), then a fenced write. A plain SET XX is not fenced: after
 * a lease expires and another request takes the key, it would overwrite that request's lease; Redis
 * 7.0 has no compare-and-set command, so the raw peer runs the shortest compare-and-set script.
 */
import { createHash, randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import type { StoredResponse } from "../../src/idempotency";
import { RedisIdempotencyStore } from "../../src/idempotency/redis";
import { encodeCompleted, leaseToken } from "../../src/idempotency/redis/record-codec";
import { beginComplete, check, checkStore, compare, rate } from "./measure";

// KEYS[1] = key, ARGV[1] = the lease value, ARGV[2] = the response, ARGV[3] = TTL (ms).
export const CAS = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end return 0`;
export const CAS_SHA = createHash("sha1").update(CAS).digest("hex");
// A request fingerprint as the middleware makes it: "v2." and the base64url of a SHA-256, 46 characters.
export const FINGERPRINT = `v2.${createHash("sha256").update("POST /orders").digest("base64url")}`;

/** The value a raw complete writes: what a replay needs, as the store's record holds it (see benchRedis). */
export const rawCompleted = (response: StoredResponse): Buffer =>
  encodeCompleted(leaseToken(FINGERPRINT, 60_000, Date.now(), "0".repeat(13)), response);

export async function benchRedis(
  url: string,
  response: StoredResponse,
  ms: number,
  concurrency: number,
): Promise<{ ours: number; raw: number; ratio: number; unfencedRatio: number }> {
  const client = new Redis(url);
  const prefix = `bench_idem_${process.pid}_${randomUUID().slice(0, 8)}:`;
  const store = new RedisIdempotencyStore(client, { prefix: `${prefix}o:` });
  try {
    await checkStore(store, response, "redis");

    // The raw complete writes what a replay needs, as the store's record holds it: the request's fingerprint, the
    // status and headers, then the body bytes as they are. Encoded once, before timing: the peer sends the same bytes
    // as the store (as bench/delivery's bare loop sends a delivery's bytes) and does none of the encoding.
    const rawValue = rawCompleted(response);
    await client.script("LOAD", CAS);
    check((await client.set(`${prefix}r:check`, "p", "PX", 60_000, "NX", "GET")) === null, "raw SET NX GET");
    check((await client.evalsha(CAS_SHA, 1, `${prefix}r:check`, "p", rawValue, 60_000)) === "OK", "raw CAS");
    check((await client.evalsha(CAS_SHA, 1, `${prefix}r:check`, "p", rawValue, 60_000)) === 0, "raw CAS fenced");

    const {
      ours: o,
      theirs: r,
      ratio,
    } = await compare(
      beginComplete(store, FINGERPRINT, response, "b"),
      async (i) => {
        const key = `${prefix}r:b${i}`;
        const lease = `p${randomUUID()}${FINGERPRINT}`;
        if ((await client.set(key, lease, "PX", 60_000, "NX", "GET")) === null) {
          await client.evalsha(CAS_SHA, 1, key, lease, rawValue, 60_000);
        }
      },
      { ms, concurrency },
    );
    // The peer the issue first named, kept beside it: SET NX then an unfenced SET XX (a stale complete can overwrite
    // a successor's lease), so its ratio is what the fence costs on top.
    const unfenced = await compare(
      beginComplete(store, FINGERPRINT, response, "u"),
      async (i) => {
        const key = `${prefix}r:u${i}`;
        const lease = `p${randomUUID()}${FINGERPRINT}`;
        if ((await client.set(key, lease, "PX", 60_000, "NX")) === "OK") {
          await client.set(key, rawValue, "PX", 60_000, "XX");
        }
      },
      { ms, concurrency },
    );
    const [ours, raw] = [o.wall, r.wall];
    console.log(
      `redis   ${response.body.byteLength} B body: ours ${rate(ours)}, raw SET NX GET + CAS script ${rate(raw)}, raw SET NX + SET XX (unfenced) ${rate(unfenced.theirs.wall)} (${concurrency} in flight)`,
    );
    return { ours, raw, ratio: ratio.wall, unfencedRatio: unfenced.ratio.wall };
  } finally {
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) await client.unlink(...keys);
    } while (cursor !== "0");
    client.disconnect();
  }
}
