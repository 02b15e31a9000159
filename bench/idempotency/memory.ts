/** The in-memory store: begin+complete on fresh keys against a bare Map doing the same writes. */
import { MemoryIdempotencyStore, type StoredResponse } from "../../src/idempotency";
import { check, compare, type Rate, rate } from "./measure";

const MAX = 100_000;

export async function benchMemory(response: StoredResponse, ms: number): Promise<{ ours: Rate; bare: Rate }> {
  const store = new MemoryIdempotencyStore({ maxEntries: MAX });
  const first = await store.begin("check", "fp", 60_000);
  check(first.kind === "acquired", "memory begin acquires");
  check(
    first.kind === "acquired" && (await store.complete("check", first.leaseToken, response, 86_400_000)),
    "memory complete",
  );
  check((await store.begin("check", "fp", 60_000)).kind === "completed", "memory replay");

  // The bare baseline: get + set to lease, get + set to complete, bounded the same way.
  const map = new Map<string, { fp: string; expires: number; token: string | undefined; response?: StoredResponse }>();
  let written = 0;
  const { ours, theirs: bare } = await compare(
    async (i) => {
      const key = `k${i}`;
      const found = await store.begin(key, "fp", 60_000);
      if (found.kind === "acquired") await store.complete(key, found.leaseToken, response, 86_400_000);
    },
    async () => {
      // Its own sequence of keys, so the oldest is known without iterating the Map.
      const n = written++;
      const key = `m${n}`;
      const now = Date.now();
      if (map.get(key) === undefined) {
        if (map.size >= MAX) map.delete(`m${n - MAX}`);
        map.set(key, { fp: "fp", expires: now + 60_000, token: String(n) });
      }
      const record = map.get(key);
      if (record) {
        record.response = response;
        record.token = undefined;
        map.delete(key);
        map.set(key, record);
      }
    },
    { ms },
  );
  console.log(
    `memory  ${response.body.byteLength} B body: ours ${rate(ours.wall)} (${rate(ours.cpu)} of CPU time), bare Map ${rate(bare.wall)} (${rate(bare.cpu)} of CPU time)`,
  );
  return { ours, bare };
}
