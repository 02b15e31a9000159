/**
 * The Redis store on a node-redis 6 client against the same client doing what a correct hand-written store must
 * (SET NX GET PX, then the fenced compare-and-set script of ./redis.ts), sending the same bytes through
 * `sendCommand`, node-redis's cheapest path: the store adapts it and must not cost more than its own work. Like the
 * store, the peer reads what `SET … GET` finds as bytes (a replay's body need not be text); its other replies are
 * integers and "OK", read as node-redis returns them.
 */
import { randomUUID } from "node:crypto";
import { createClient } from "redis";
import type { StoredResponse } from "../../src/idempotency";
import { RedisIdempotencyStore } from "../../src/idempotency/redis";
import { beginComplete, check, checkStore, compare, rate } from "./measure";
import { CAS, CAS_SHA, FINGERPRINT, rawCompleted } from "./redis";

// RESP's bulk strings as Buffers (node-redis's RESP_TYPES.BLOB_STRING).
const AS_BYTES = { typeMapping: { 36: Buffer } } as const;

export async function benchNodeRedis(
  url: string,
  response: StoredResponse,
  ms: number,
  concurrency: number,
): Promise<{ ours: number; raw: number; ratio: number }> {
  const client = await createClient({ url }).connect();
  const prefix = `bench_idem_nr_${process.pid}_${randomUUID().slice(0, 8)}:`;
  const store = new RedisIdempotencyStore(client, { prefix: `${prefix}o:` });
  try {
    await checkStore(store, response, "redis on node-redis");
    const rawValue = rawCompleted(response);
    const ttl = "60000";
    await client.sendCommand(["SCRIPT", "LOAD", CAS]);
    const probe = `${prefix}r:check`;
    check((await client.sendCommand<unknown>(["SET", probe, "p", "PX", ttl, "NX", "GET"])) === null, "raw SET NX GET");
    check(
      (await client.sendCommand<unknown>(["EVALSHA", CAS_SHA, "1", probe, "p", rawValue, ttl])) === "OK",
      "raw CAS",
    );
    check(
      (await client.sendCommand<unknown>(["EVALSHA", CAS_SHA, "1", probe, "p", rawValue, ttl])) === 0,
      "raw CAS fenced",
    );

    const {
      ours: o,
      theirs: r,
      ratio,
    } = await compare(
      beginComplete(store, FINGERPRINT, response),
      async (i) => {
        const key = `${prefix}r:b${i}`;
        const lease = `p${randomUUID()}${FINGERPRINT}`;
        if ((await client.sendCommand(["SET", key, lease, "PX", ttl, "NX", "GET"], AS_BYTES)) === null) {
          await client.sendCommand(["EVALSHA", CAS_SHA, "1", key, lease, rawValue, ttl]);
        }
      },
      { ms, concurrency },
    );
    console.log(
      `redis   ${response.body.byteLength} B body on node-redis: ours ${rate(o.wall)}, raw SET NX GET + CAS script ${rate(r.wall)} (${concurrency} in flight)`,
    );
    return { ours: o.wall, raw: r.wall, ratio: ratio.wall };
  } finally {
    for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
      if (keys.length > 0) await client.unlink(keys);
    }
    await client.close();
  }
}
