/**
 * The memory store's stand-in for a long key: a 128-bit digest, so that a key a client chooses (a header, a token)
 * costs the store a bounded number of characters whatever its length. Pure JS, synchronous: the memory store runs on
 * Fetch runtimes too, where node:crypto may be absent and Web Crypto's digest is asynchronous.
 *
 * Not a cryptographic hash. That is enough here: the digest never leaves the process, so a client cannot aim one of
 * its keys at another client's digest without knowing that client's key, and keys it makes collide with each other
 * only merge its own allowances. Random keys collide with probability about 2^-128 per pair.
 */

// MurmurHash3's 32-bit finalizer: every input bit reaches every output bit.
function fmix32(value: number): number {
  let h = value;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A lone low surrogate opens every digest: no well-formed key (assertStoreKey) starts with one, so none equals it. */
const DIGEST_MARK = "\udc00";

/**
 * The 128-bit digest of `key`, as 33 characters: a mark no well-formed key can begin with, then 32 hex digits.
 * Four lanes, each a bijective step per UTF-16 code unit (xor, multiply by an odd constant, rotate) with its own
 * constants, finished with the length.
 */
export function keyDigest(key: string): string {
  let a = 0x6a09e667;
  let b = 0xbb67ae85;
  let c = 0x3c6ef372;
  let d = 0xa54ff53a;
  for (let i = 0; i < key.length; i++) {
    const unit = key.charCodeAt(i);
    a = Math.imul(a ^ unit, 0x85ebca6b);
    a = (a << 13) | (a >>> 19);
    b = Math.imul(b ^ unit, 0xc2b2ae35);
    b = (b << 15) | (b >>> 17);
    c = Math.imul(c ^ unit, 0x27d4eb2f);
    c = (c << 17) | (c >>> 15);
    d = Math.imul(d ^ unit, 0x165667b1);
    d = (d << 19) | (d >>> 13);
  }
  const length = key.length | 0;
  // Each lane finished with the next one mixed in, so that a difference in one lane spreads to all four.
  const lanes = [fmix32(a ^ length) ^ d, fmix32(b ^ length) ^ a, fmix32(c ^ length) ^ b, fmix32(d ^ length) ^ c];
  return DIGEST_MARK + lanes.map((lane) => fmix32(lane).toString(16).padStart(8, "0")).join("");
}
