import { inPrefix, parseIp } from "../../http/ip-address";

/** The kind of network an IP address belongs to; only `public` may be reached by default. */
export type AddressClass =
  | "public"
  | "unspecified"
  | "loopback"
  | "private"
  | "link_local"
  | "cgnat"
  | "multicast"
  | "unique_local"
  | "ipv4_mapped"
  | "reserved";

type Range = readonly [network: string, bits: number, kind: AddressClass];

// RFC 6890 special-purpose registries (IPv4 §2.2.2, IPv6 §2.2.3), plus multicast (RFC 5771, RFC 4291 §2.7).
const IPV4_RANGES: readonly Range[] = [
  ["0.0.0.0", 8, "unspecified"], // RFC 1122 §3.2.1.3 "this network"
  ["10.0.0.0", 8, "private"], // RFC 1918
  ["100.64.0.0", 10, "cgnat"], // RFC 6598 shared address space
  ["127.0.0.0", 8, "loopback"], // RFC 1122
  ["169.254.0.0", 16, "link_local"], // RFC 3927 (cloud metadata lives here)
  ["172.16.0.0", 12, "private"], // RFC 1918
  ["192.0.0.0", 24, "reserved"], // RFC 6890 IETF protocol assignments
  ["192.0.2.0", 24, "reserved"], // RFC 5737 documentation
  ["192.88.99.0", 24, "reserved"], // RFC 7526 deprecated 6to4 relay
  ["192.168.0.0", 16, "private"], // RFC 1918
  ["198.18.0.0", 15, "reserved"], // RFC 2544 benchmarking
  ["198.51.100.0", 24, "reserved"], // RFC 5737
  ["203.0.113.0", 24, "reserved"], // RFC 5737
  ["224.0.0.0", 4, "multicast"], // RFC 5771
  ["240.0.0.0", 4, "reserved"], // RFC 1112 future use, includes broadcast
];

const IPV6_RANGES: readonly Range[] = [
  ["::", 128, "unspecified"], // RFC 4291 §2.5.2
  ["::1", 128, "loopback"], // RFC 4291 §2.5.3
  ["::ffff:0:0", 96, "ipv4_mapped"], // RFC 4291 §2.5.5.2
  ["::ffff:0:0:0", 96, "ipv4_mapped"], // RFC 6145 / RFC 7915 §2 IPv4-translated (SIIT): an IPv4 address too
  ["::", 96, "reserved"], // RFC 4291 §2.5.5.1 deprecated IPv4-compatible
  ["64:ff9b:1::", 48, "reserved"], // RFC 8215 local-use NAT64
  ["100::", 64, "reserved"], // RFC 6666 discard-only
  ["100:0:0:1::", 64, "reserved"], // RFC 9780 dummy IPv6 prefix
  ["2001::", 23, "reserved"], // RFC 2928 IETF protocol assignments (incl. Teredo)
  ["2001:db8::", 32, "reserved"], // RFC 3849 documentation
  ["2002::", 16, "reserved"], // RFC 3056 6to4 tunnels into any IPv4 address
  ["3fff::", 20, "reserved"], // RFC 9637 documentation
  ["5f00::", 16, "reserved"], // RFC 9602 SRv6 SIDs
  ["fc00::", 7, "unique_local"], // RFC 4193
  ["fe80::", 10, "link_local"], // RFC 4291 §2.5.6
  ["fec0::", 10, "reserved"], // RFC 3879 deprecated site-local
  ["ff00::", 8, "multicast"], // RFC 4291 §2.7
];

const compile = (ranges: readonly Range[]) =>
  ranges.map(([network, bits, kind]) => ({ network: parseIp(network) as Uint8Array, bits, kind }));
const V4 = compile(IPV4_RANGES);
const V6 = compile(IPV6_RANGES);

/**
 * Classifies 4 or 16 address bytes; NAT64 (64:ff9b::/96) takes the class of the embedded IPv4 address, and an IPv6
 * address outside 2000::/3 is `reserved`.
 */
export function classifyAddressBytes(bytes: Uint8Array): AddressClass {
  if (bytes.length === 4) {
    for (const range of V4) if (inPrefix(bytes, range.network, range.bits)) return range.kind;
    return "public";
  }
  // RFC 6052 §2.1: the well-known NAT64 prefix reaches whatever IPv4 address it embeds.
  if (inPrefix(bytes, NAT64, 96)) return classifyAddressBytes(bytes.subarray(12));
  for (const range of V6) if (inPrefix(bytes, range.network, range.bits)) return range.kind;
  // IANA IPv6 Address Space registry: only 2000::/3 is allocated as global unicast, the rest is "Reserved by IETF";
  // nothing public lives there, so an address outside it (1::1, 8000::1) is refused rather than trusted.
  return inPrefix(bytes, GLOBAL_UNICAST, 3) ? "public" : "reserved";
}

const NAT64 = parseIp("64:ff9b::") as Uint8Array;
const GLOBAL_UNICAST = parseIp("2000::") as Uint8Array;
const MAPPED = parseIp("::ffff:0:0") as Uint8Array;
const TRANSLATED = parseIp("::ffff:0:0:0") as Uint8Array;

const SIX_TO_FOUR = parseIp("2002::") as Uint8Array;
const TEREDO = parseIp("2001::") as Uint8Array;

/**
 * The IPv4 address an IPv6 address reaches, or `undefined`: IPv4-mapped (RFC 4291 §2.5.5.2), IPv4-translated
 * (RFC 7915 §2) and the NAT64 well-known prefix (RFC 6052 §2.1) each carry one in their last 32 bits, 6to4 (RFC 3056
 * §2) in the 32 bits after 2002::/16, and Teredo (RFC 4380 §4) its client's in the last 32 bits with every bit
 * flipped; so a rule about an IPv4 address must hold for these spellings of it too.
 */
export function embeddedIpv4(bytes: Uint8Array): Uint8Array | undefined {
  if (bytes.length !== 16) return undefined;
  const embeds = inPrefix(bytes, MAPPED, 96) || inPrefix(bytes, TRANSLATED, 96) || inPrefix(bytes, NAT64, 96);
  if (embeds) return bytes.subarray(12);
  // RFC 3056 §2: 2002:V4ADDR::/48 is the site behind the 6to4 router at V4ADDR, which the packets are sent to.
  if (inPrefix(bytes, SIX_TO_FOUR, 16)) return bytes.subarray(2, 6);
  // RFC 4380 §4: 2001:0000::/32, then the Teredo server's IPv4 address, flags, the port and last the client's
  // mapped IPv4 address, "obfuscated" (XOR 0xffffffff). A relay sends the packets there (§5.4), not to the server.
  if (inPrefix(bytes, TEREDO, 32)) return bytes.subarray(12).map((byte) => byte ^ 0xff);
  return undefined;
}

/**
 * Classifies an IP address literal for the SSRF policy; `undefined` when `text` is not an IP address.
 * @example classifyAddress("169.254.169.254") // "link_local"
 */
export function classifyAddress(text: string): AddressClass | undefined {
  const bytes = parseIp(text);
  return bytes === undefined ? undefined : classifyAddressBytes(bytes);
}
