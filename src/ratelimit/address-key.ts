/**
 * The rate-limit key of a client address: one per IPv4 address, one per IPv6 prefix (one per address where a prefix
 * is not one host), each in one spelling.
 * Parsing is `../http/ip-address` (the library's one IP parser; node:net is not reachable from the pure core, which
 * runs on Fetch runtimes too). Tests check the keys against node:net's `BlockList` and `SocketAddress`.
 */
import { inPrefix, parseIPv6, parseIp } from "../http/ip-address";

// RFC 4291 §2.5.5.2: ::ffff:0:0/96 holds IPv4 addresses, which are keyed as IPv4.
const IPV4_MAPPED = parseIp("::ffff:0:0") as Uint8Array;
// RFC 2765 §2.1: ::ffff:0:0:0/96 ("IPv4-translated", 0::ffff:0:a.b.c.d) is the address of a node behind a SIIT
// translator, the IPv4 address a.b.c.d its own: keyed by its /64 (::/64) every such node shared one allowance.
// (RFC 6145, now RFC 7915, obsoleted RFC 2765 and translates with RFC 6052's prefixes below; older translators write
// this form.)
const IPV4_TRANSLATED = parseIp("::ffff:0:0:0") as Uint8Array;
// RFC 6052 §2.1: 64:ff9b::/96 holds the IPv4 address a translator (NAT64, SIIT-DC RFC 7755) stands in for; keyed by
// its /64 every IPv4 client of an IPv6-only server shared one allowance.
const NAT64_WELL_KNOWN = parseIp("64:ff9b::") as Uint8Array;
// RFC 8215: 64:ff9b:1::/48, a translator's own prefix of a length only it knows: the IPv4 may sit inside the /64.
const NAT64_LOCAL = parseIp("64:ff9b:1::") as Uint8Array;
// RFC 4380 §4: 2001::/32 is Teredo; its /64 is the relay server and flags (one per server, shared by all its clients),
// and the last 32 bits are the client's public IPv4 address (its NAT's), each bit inverted.
const TEREDO = parseIp("2001::") as Uint8Array;
// RFC 3056 §2: 2002:V4ADDR::/48 is the whole site prefix of the one IPv4 host V4ADDR; keyed by its /64, that host took
// a fresh allowance from each of its 65,536 /64s. (6rd, RFC 5969, embeds an IPv4 under an ISP's own prefix, which the
// address does not reveal; ISATAP, RFC 5214 §6.1, embeds it in the interface identifier, inside a /64 that is kept.)
const SIX_TO_FOUR = parseIp("2002::") as Uint8Array;
// RFC 4291 §2.5.6: every link's link-local addresses are in fe80::/64, so that /64 is every host on every link.
const LINK_LOCAL = parseIp("fe80::") as Uint8Array;
// RFC 4291 §2.5.2-§2.5.5.1: ::/96 holds ::, the loopback ::1 and the deprecated IPv4-compatible addresses: one host each.
const ZERO = parseIp("::") as Uint8Array;

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
 * The key of an address: an IPv4 address (or an IPv4-mapped, SIIT IPv4-translated or NAT64 well-known-prefix IPv6
 * one, in any spelling) as dotted decimal, a Teredo one as the client IPv4 address it carries and a 6to4 one as the
 * IPv4 host whose /48 it is in, whatever `ipv6Prefix`; an IPv6 address as its first `ipv6Prefix`
 * bits in RFC 5952 form, followed by `/ipv6Prefix` below 128 (the zone dropped); where a prefix is not one host, the
 * whole address: a link-local one with its zone (RFC 4007 §6: `fe80::1` on two links is two hosts), one in ::/96
 * (`::1`) or in 64:ff9b:1::/48; anything else (an obfuscated identifier, RFC 7239 §6.3) as it is.
 * @param address an address without brackets or port.
 * @param ipv6Prefix the bits of an IPv6 address that name a client, 1 to 128.
 */
export function addressKey(address: string, ipv6Prefix: number): string {
  if (address.indexOf(":") === -1) return address; // IPv4 (one spelling per address) or an identifier
  const bytes = parseIPv6(address);
  if (bytes === undefined) return address;
  if ([IPV4_MAPPED, IPV4_TRANSLATED, NAT64_WELL_KNOWN].some((prefix) => inPrefix(bytes, prefix, 96))) {
    return `${bytes[12]}.${bytes[13]}.${bytes[14]}.${bytes[15]}`;
  }
  if (inPrefix(bytes, TEREDO, 32)) return [12, 13, 14, 15].map((i) => ~(bytes[i] as number) & 0xff).join(".");
  if (inPrefix(bytes, SIX_TO_FOUR, 16)) return `${bytes[2]}.${bytes[3]}.${bytes[4]}.${bytes[5]}`;
  if (inPrefix(bytes, LINK_LOCAL, 10)) {
    const zone = address.indexOf("%");
    return zone === -1 || zone === address.length - 1 ? formatIPv6(bytes) : formatIPv6(bytes) + address.slice(zone);
  }
  if (ipv6Prefix === 128 || inPrefix(bytes, ZERO, 96) || inPrefix(bytes, NAT64_LOCAL, 48)) return formatIPv6(bytes);
  const whole = ipv6Prefix >> 3;
  if (whole < 16) bytes[whole] = (bytes[whole] as number) & ((0xff << (8 - (ipv6Prefix & 7))) & 0xff);
  bytes.fill(0, whole + 1);
  return `${formatIPv6(bytes)}/${ipv6Prefix}`;
}
