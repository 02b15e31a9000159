/**
 * The memory store's stand-in for a long key: SHA-256 of its UTF-8, cut to 128 bits, so that a key a client chooses (a
 * header, a token) costs the store a bounded number of characters whatever its length. In plain JS and synchronous: the
 * memory store runs on Fetch runtimes too, where node:crypto may be absent and Web Crypto's digest is asynchronous.
 *
 * Collision-resistant, not merely well mixed: keys are often guessable (an address, a user id in a path, an API key's
 * prefix), so a client that could craft a long key with the digest of another client's long key would spend that
 * client's allowance. The earlier multiply-rotate digest (public constants, a 128-bit state whose every step inverts)
 * was unanalysed: a meet-in-the-middle second preimage cost it 2^64 at most, less with any shortcut in its structure.
 * Cut to 128 bits, SHA-256 keeps a second preimage at 2^128; a collision (2^64) of two keys one client made merges only
 * its own allowances.
 */

// FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube roots of the first 64 primes.
const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

// FIPS 180-4 §5.3.3: the first 32 bits of the fractional parts of the square roots of the first 8 primes.
const H0 = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

const rotr = (x: number, n: number): number => (x >>> n) | (x << (32 - n));

/** SHA-256 (FIPS 180-4 §6.2) of `bytes`: the eight 32-bit words of the hash. */
function sha256(bytes: Uint8Array): number[] {
  // §5.1.1: a 1 bit, zeros to 448 mod 512 bits, then the length in bits as 64 bits (big-endian).
  const padded = new Uint8Array((((bytes.length + 8) >> 6) + 1) << 6);
  padded.set(bytes);
  padded[bytes.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(bytes.length / 0x20000000));
  view.setUint32(padded.length - 4, (bytes.length << 3) >>> 0);
  const h = H0.slice();
  const w = new Uint32Array(64);
  for (let offset = 0; offset < padded.length; offset += 64) {
    for (let t = 0; t < 16; t++) w[t] = view.getUint32(offset + 4 * t);
    for (let t = 16; t < 64; t++) {
      const w15 = w[t - 15] as number;
      const w2 = w[t - 2] as number;
      const s0 = rotr(w15, 7) ^ rotr(w15, 18) ^ (w15 >>> 3);
      const s1 = rotr(w2, 17) ^ rotr(w2, 19) ^ (w2 >>> 10);
      w[t] = (w[t - 16] as number) + s0 + (w[t - 7] as number) + s1;
    }
    let [a, b, c, d, e, f, g, hh] = h as [number, number, number, number, number, number, number, number];
    for (let t = 0; t < 64; t++) {
      const t1 =
        (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + (K[t] as number) + (w[t] as number)) |
        0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    const words = [a, b, c, d, e, f, g, hh];
    for (let i = 0; i < 8; i++) h[i] = ((h[i] as number) + (words[i] as number)) >>> 0;
  }
  return h;
}

/** A lone low surrogate opens every digest: no well-formed key (assertStoreKey) starts with one, so none equals it. */
const DIGEST_MARK = "\udc00";

const encoder = new TextEncoder();

/**
 * The digest of `key`, as 33 characters: a mark no well-formed key can begin with, then the first 128 bits of the
 * SHA-256 of its UTF-8 (lossless: stored keys are well-formed) as 32 hex digits.
 */
export function keyDigest(key: string): string {
  const words = sha256(encoder.encode(key));
  let hex = DIGEST_MARK;
  for (let i = 0; i < 4; i++) hex += (words[i] as number).toString(16).padStart(8, "0");
  return hex;
}
