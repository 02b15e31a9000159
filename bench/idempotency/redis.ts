/** The Redis store against the bare client doing the same round trips: SET NX PX, then SET XX PX. */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import type { StoredResponse } from "../../src/idempotency";
import { RedisIdempotencyStore } from "../../src/idempotency/redis";
import { check, compare, rate } from "./measure";

export async function benchRedis(
  url: string,
  response: StoredResponse,
  ms: number,
  concurrency: number,
): Promise<{ ours: number; raw: number; ratio: number }> {
  const client = new Redis(url);
  const prefix = `bench_idem_${process.pid}_${randomUUID().slice(0, 8)}:`;
  const store = new RedisIdempotencyStore(client, { prefix: `${prefix}o:` });
  try {
    const first = await store.begin("check", "fp", 60_000);
    check(first.kind === "acquired", "redis begin acquires");
    check(
      first.kind === "acquired" && (await store.complete("check", first.leaseToken, response, 60_000)),
      "redis complete",
    );
    const again = await store.begin("check", "fp", 60_000);
    check(
      again.kind === "completed" && Buffer.from(again.response.body).equals(Buffer.from(response.body)),
      "redis replay",
    );

    // The raw complete writes the body bytes as they are, as the store does.
    const rawValue = Buffer.from(response.body);
    check((await client.set(`${prefix}r:check`, "p", "PX", 60_000, "NX")) === "OK", "raw SET NX");
    check((await client.set(`${prefix}r:check`, rawValue, "PX", 60_000, "XX")) === "OK", "raw SET XX");

    const {
      ours: o,
      theirs: r,
      ratio,
    } = await compare(
      async (i) => {
        const key = `b${i}`;
        const found = await store.begin(key, "fingerprint-of-43-characters-xxxxxxxxxxxxx", 60_000);
        if (found.kind === "acquired") await store.complete(key, found.leaseToken, response, 60_000);
      },
      async (i) => {
        const key = `${prefix}r:b${i}`;
        if (
          (await client.set(key, `p${randomUUID()}fingerprint-of-43-characters-xxxxxxxxxxxxx`, "PX", 60_000, "NX")) ===
          "OK"
        ) {
          await client.set(key, rawValue, "PX", 60_000, "XX");
        }
      },
      { ms, concurrency },
    );
    const [ours, raw] = [o.wall, r.wall];
    console.log(
      `redis   ${response.body.byteLength} B body: ours ${rate(ours)}, raw SET NX + SET XX ${rate(raw)} (${concurrency} in flight)`,
    );
    return { ours, raw, ratio: ratio.wall };
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
