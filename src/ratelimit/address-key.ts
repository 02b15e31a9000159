/**
 * The rate-limit key of a client address: one per IPv4 address, one per IPv6 prefix, each in one spelling.
 * Parsing is `../http/ip-address` (the library's one IP parser; node:net is not reachable from the pure core, which
 * runs on Fetch runtimes too). Tests check the keys against node:net's `BlockList` and `SocketAddress`.
 */
import { inPrefix, parseIPv6, parseIp } from "../http/ip-address";

// RFC 4291 §2.5.5.2: ::ffff:0:0/96 holds IPv4 addresses, which are keyed as IPv4.
const IPV4_MAPPED = parseIp("::ffff:0:0") as Uint8Array;

/** RFC 5952 §4: lower case, no leading zeros, the first longest run of two or more zero groups as "::". */
function formatIPv6(bytes: Uint8Array): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] as number) << 8) | (bytes[i + 1] as number));
  let bestAt = -1;
  let bestLength = 1; // §4.2.2: a single zero group is not shortened
  for (let i = 0; i < 8; ) {
    let end = i;
    while (end < 8 && groups[end] === 0) end++;
    if (end - i > bestLength) {
      bestAt = i;
      bestLength = end - i;
    }
    i = end === i ? i + 1 : end;
  }
  const hex = groups.map((group) => group.toString(16));
  if (bestAt === -1) return hex.join(":");
  return `${hex.slice(0, bestAt).join(":")}::${hex.slice(bestAt + bestLength).join(":")}`;
}

/**
 * The key of an address: an IPv4 address (or an IPv4-mapped IPv6 one, in any spelling) as dotted decimal; an IPv6
 * address as its first `ipv6Prefix` bits in RFC 5952 form, followed by `/ipv6Prefix` below 128 (the zone dropped);
 * anything else (an obfuscated identifier, RFC 7239 §6.3) as it is.
 * @param address an address without brackets or port.
 * @param ipv6Prefix the bits of an IPv6 address that name a client, 1 to 128.
 */
export function addressKey(address: string, ipv6Prefix: number): string {
  if (address.indexOf(":") === -1) return address; // IPv4 (one spelling per address) or an identifier
  const bytes = parseIPv6(address);
  if (bytes === undefined) return address;
  if (inPrefix(bytes, IPV4_MAPPED, 96)) return `${bytes[12]}.${bytes[13]}.${bytes[14]}.${bytes[15]}`;
  if (ipv6Prefix === 128) return formatIPv6(bytes);
  const whole = ipv6Prefix >> 3;
  if (whole < 16) bytes[whole] = (bytes[whole] as number) & ((0xff << (8 - (ipv6Prefix & 7))) & 0xff);
  bytes.fill(0, whole + 1);
  return `${formatIPv6(bytes)}/${ipv6Prefix}`;
}
