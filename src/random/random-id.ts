import { randomFillSync } from "node:crypto";

const BYTES = 16;
// Drawn in batches, as node:crypto's randomUUID does: one call into the system's generator per 256 ids.
const batch = Buffer.alloc(BYTES * 256);
let used = batch.length;

/** Where `bytes` fresh random bytes start in the batch (at most {@link BYTES}), drawing a new batch when needed. */
function take(bytes: number): number {
  if (used + bytes > batch.length) {
    randomFillSync(batch);
    used = 0;
  }
  const at = used;
  used += bytes;
  return at;
}

/**
 * `prefix` followed by a random (version 4) UUID's 32 hex digits without its dashes: `evt_3f2a…`, `dlv_…`, as
 * `randomUUID().replaceAll("-", "")` writes it. Read out of the batch as one string rather than made that way: that
 * string is built from the UUID's pieces and keeps them for as long as the id lives, ~160 bytes more per id, and the
 * in-memory queue keeps an id per delivery (bench/delivery, "memory": a million scheduled retries).
 */
export function randomId(prefix: string): string {
  const at = take(BYTES);
  // RFC 9562 §5.4: the version (4) in the high nibble of octet 6, the variant (10) in the high bits of octet 8.
  batch[at + 6] = ((batch[at + 6] as number) & 0x0f) | 0x40;
  batch[at + 8] = ((batch[at + 8] as number) & 0x3f) | 0x80;
  return `${prefix}${batch.toString("hex", at, at + BYTES)}`;
}

/** `bytes` random bytes (at most 16) as lower-case hex digits, from the same batches. */
export function randomHex(bytes: number): string {
  const at = take(bytes);
  return batch.toString("hex", at, at + bytes);
}
