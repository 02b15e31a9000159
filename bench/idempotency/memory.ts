/** The in-memory store: begin+complete on fresh keys against a bare Map doing the same writes. */
import { MemoryIdempotencyStore, type StoredResponse } from "../../src/idempotency";
import { check, compare, type Rate, rate } from "./measure";

interface BareRecord {
  fingerprint: string;
  expiresAt: number;
  token: string | undefined;
  response: StoredResponse | undefined;
}

/**
 * The least a bounded Map must do for begin+complete: `begin` looks the key up (a record past its expiry counts as
 * absent), evicts the oldest key at the bound (a ring of keys: no list to keep) and inserts a record under a new
 * token; `complete` looks it up again and fills it in if the token still matches and the lease is live. Times are
 * relative to an epoch, as the store keeps them.
 */
function bareBoundedMap(max: number, response: StoredResponse) {
  const map = new Map<string, BareRecord>();
  const ring: string[] = new Array(max).fill("");
  let head = 0;
  let tokens = 0;
  const epoch = Date.now();
  return {
    now: () => Date.now() - epoch,
    /** The new lease token, or `undefined` when a live record answers instead. */
    begin(key: string, now: number): string | undefined {
      const found = map.get(key);
      // A live record is answered from; an expired one is replaced, as the store does.
      if (found !== undefined && found.expiresAt > now) return undefined;
      if (found === undefined && map.size >= max) map.delete(ring[head] as string);
      ring[head] = key;
      head = head + 1 === max ? 0 : head + 1;
      const token = String(++tokens);
      map.set(key, { fingerprint: "fp", expiresAt: now + 60_000, token, response: undefined });
      return token;
    },
    complete(key: string, token: string, now: number): boolean {
      const record = map.get(key);
      if (record === undefined || record.token !== token || record.expiresAt <= now) return false;
      record.token = undefined;
      record.response = response;
      record.expiresAt = now + 86_400_000;
      return true;
    },
  };
}

/** {@link bareBoundedMap} called synchronously, one clock reading per begin+complete. */
function bareMap(max: number, response: StoredResponse): (i: number) => void {
  const bare = bareBoundedMap(max, response);
  return (i) => {
    const key = `k${i}`;
    const now = bare.now();
    const token = bare.begin(key, now);
    if (token !== undefined) bare.complete(key, token, now);
  };
}

/**
 * Times begin+complete on a store bounded at `maxEntries` (always full after the warm-up: every
 * begin evicts) against {@link bareMap} with the same bound. The store answers with plain values, so the operation
 * calls it as the middleware does: without awaiting them.
 */
export async function benchMemory(
  response: StoredResponse,
  ms: number,
  maxEntries: number,
): Promise<{ ours: Rate; bare: Rate; ratio: Rate }> {
  const store = new MemoryIdempotencyStore({ maxEntries });
  const first = store.begin("check", "fp", 60_000);
  check(first.kind === "acquired", "memory begin acquires");
  check(
    first.kind === "acquired" && store.complete("check", first.leaseToken, response, 86_400_000),
    "memory complete",
  );
  check(store.begin("check", "fp", 60_000).kind === "completed", "memory replay");

  const bare = bareMap(maxEntries, response);
  const op = (i: number) => {
    const key = `k${i}`;
    const found = store.begin(key, "fp", 60_000);
    if (found.kind === "acquired") store.complete(key, found.leaseToken, response, 86_400_000);
  };
  const { ours, theirs, ratio } = await compare(op, bare, { ms });
  console.log(
    `memory  ${response.body.byteLength} B body, ${maxEntries.toLocaleString("en-US")} entries: ours ${rate(ours.wall)} (${rate(ours.cpu)} of CPU time), bare Map ${rate(theirs.wall)} (${rate(theirs.cpu)} of CPU time)`,
  );
  return { ours, bare: theirs, ratio };
}
