import { MemoryIdempotencyStore } from "../../src/idempotency";

const response = { status: 201, headers: { "content-type": "application/json" }, body: new Uint8Array(63) } as never;
const max = Number(process.env.MAX ?? 10_000);
const store = new MemoryIdempotencyStore({ maxEntries: max });
const map = new Map<string, { fingerprint: string; expiresAt: number; token: string | undefined; response: unknown }>();
const ring: string[] = new Array(max).fill("");
let head = 0,
  tokens = 0;
const epoch = Date.now();
function bare(i: number) {
  const key = `k${i}`;
  const now = Date.now() - epoch;
  const found = map.get(key);
  if (found !== undefined && found.expiresAt > now) return;
  if (found === undefined && map.size >= max) map.delete(ring[head] as string);
  ring[head] = key;
  head = head + 1 === max ? 0 : head + 1;
  const token = String(++tokens);
  map.set(key, { fingerprint: "fp", expiresAt: now + 60_000, token, response: undefined });
  const record = map.get(key)!;
  if (record.token !== token || record.expiresAt <= now) return;
  record.token = undefined;
  record.response = response;
  record.expiresAt = now + 86_400_000;
}
function ours(i: number) {
  const key = `k${i}`;
  const found = store.begin(key, "fp", 60_000);
  if (found.kind === "acquired") store.complete(key, found.leaseToken, response, 86_400_000);
}
let n = 0;
function time(f: (i: number) => void, count: number) {
  const t = process.cpuUsage();
  for (let i = 0; i < count; i++) f(n++);
  const d = process.cpuUsage(t);
  return ((d.user + d.system) * 1000) / count;
}
for (let r = 0; r < 8; r++) {
  const a = time(ours, 1_000_000),
    b = time(bare, 1_000_000);
  console.log(`ours ${a.toFixed(0)} ns, bare ${b.toFixed(0)} ns, ratio ${(b / a).toFixed(2)}`);
}
