/** Parsing of IP address literals into bytes, for the SSRF checks and the request-target checks. Internal. */

/** Parses a dotted-quad IPv4 address (four decimal octets, no leading zeros) into 4 bytes. */
export function parseIPv4(text: string): Uint8Array | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const part = parts[i] as string;
    // Octal-looking ("010") and empty octets are refused: resolvers disagree on them.
    if (!/^(0|[1-9]\d{0,2})$/.test(part)) return undefined;
    const value = Number(part);
    if (value > 255) return undefined;
    out[i] = value;
  }
  return out;
}

/** Parses an IPv6 address (RFC 4291 §2.2, with `::`, a trailing dotted IPv4 and an optional zone) into 16 bytes. */
export function parseIPv6(input: string): Uint8Array | undefined {
  let text = input;
  const zone = text.indexOf("%");
  if (zone !== -1) text = text.slice(0, zone);
  if (!/^[0-9a-fA-F:.]+$/.test(text)) return undefined;
  const words: number[] = [];
  let groups = text;
  let v4: Uint8Array | undefined;
  if (text.includes(".")) {
    // RFC 4291 §2.2 (3): the last 32 bits may be written as a dotted IPv4 address.
    const lastColon = text.lastIndexOf(":");
    v4 = parseIPv4(text.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    groups = text.slice(0, lastColon + 1);
    if (!groups.endsWith("::")) groups = groups.slice(0, -1);
  }
  const parse = (chunk: string): number[] | undefined => {
    if (chunk === "") return [];
    const out: number[] = [];
    for (const group of chunk.split(":")) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return undefined;
      out.push(Number.parseInt(group, 16));
    }
    return out;
  };
  const wanted = v4 === undefined ? 8 : 6;
  const doubleAt = groups.indexOf("::");
  if (doubleAt === -1) {
    const all = parse(groups);
    if (all === undefined || all.length !== wanted) return undefined;
    words.push(...all);
  } else {
    if (groups.indexOf("::", doubleAt + 1) !== -1) return undefined;
    const head = parse(groups.slice(0, doubleAt));
    const rest = parse(groups.slice(doubleAt + 2));
    if (head === undefined || rest === undefined || head.length + rest.length >= wanted) return undefined;
    words.push(...head, ...new Array<number>(wanted - head.length - rest.length).fill(0), ...rest);
  }
  const out = new Uint8Array(16);
  for (let i = 0; i < wanted; i++) {
    out[i * 2] = (words[i] as number) >> 8;
    out[i * 2 + 1] = (words[i] as number) & 0xff;
  }
  if (v4 !== undefined) out.set(v4, 12);
  return out;
}

/** Parses an IPv4 or IPv6 literal (IPv6 optionally in brackets) into 4 or 16 bytes. */
export function parseIp(text: string): Uint8Array | undefined {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  return bare.includes(":") ? parseIPv6(bare) : parseIPv4(bare);
}

/** Whether the first `bits` bits of `address` equal those of `network` (same family). */
export function inPrefix(address: Uint8Array, network: Uint8Array, bits: number): boolean {
  if (address.length !== network.length) return false;
  const whole = bits >> 3;
  for (let i = 0; i < whole; i++) if (address[i] !== network[i]) return false;
  const rest = bits & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((address[whole] as number) & mask) === ((network[whole] as number) & mask);
}
