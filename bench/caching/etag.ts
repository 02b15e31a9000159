/**
 * Strong ETag from response bytes: ours (one-shot SHA-1, base64url) against jshttp `etag` (SHA-1 via
 * createHash, base64, length prefix), for bodies of 100 B, 1 KiB, 64 KiB and 1 MiB.
 */
import etag from "etag";
import { etagFromBody, parseEntityTag } from "../../src/caching/index";
import { type Comparison, compare, consume } from "./measure";

const SIZES: [string, number][] = [
  ["100B", 100],
  ["1KiB", 1024],
  ["64KiB", 64 * 1024],
  ["1MiB", 1024 * 1024],
];

// Deterministic bytes (xorshift32), so every run hashes the same inputs.
function bytes(size: number, seed: number): Buffer {
  const out = Buffer.alloc(size);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

function check(size: number): void {
  const body = bytes(size, size);
  const other = Buffer.from(body);
  other[size - 1] = (other[size - 1] ?? 0) ^ 1;
  for (const [name, make] of [
    ["ours", (b: Buffer) => etagFromBody(b)],
    ["etag", (b: Buffer) => etag(b)],
  ] as const) {
    const tag = make(body);
    const parsed = parseEntityTag(tag);
    if (parsed === undefined || parsed.weak) throw new Error(`${name}: ${tag} is not a strong entity-tag`);
    if (make(Buffer.from(body)) !== tag) throw new Error(`${name}: tag is not stable for equal bytes`);
    if (make(other) === tag) throw new Error(`${name}: tag did not change with the bytes`);
  }
}

/** Runs the ETag comparisons. */
export function runEtag(): Comparison[] {
  console.log("\n# strong ETag from bytes (ours: crypto.hash sha1 base64url; etag: createHash sha1 base64 + length)");
  const results: Comparison[] = [];
  for (const [label, size] of SIZES) {
    check(size);
    const body = bytes(size, size);
    const rounds = size >= 64 * 1024 ? 7 : 5;
    results.push(
      compare(
        `etag ${label}`,
        "etag",
        () => consume(etagFromBody(body)),
        () => consume(etag(body)),
        rounds,
      ),
    );
  }
  return results;
}
