import { parseIp } from "../../http/ip-address";

// The entries of a UrlPolicy (`allow`, `deny`, `ports`) and the host spelling they are compared in. Internal.

/** Addresses within `bits` bits of `network` (4 or 16 bytes). */
export interface AddressRange {
  readonly network: Uint8Array;
  readonly bits: number;
}

/** Strips IPv6 brackets from a URL host name. */
export function bareHost(hostname: string): string {
  return hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
}

/**
 * A host name as the policy compares it: lower case, without the trailing dots of a fully qualified name
 * (RFC 1034 §3.1: `localhost.` is `localhost`, so it must not slip past the localhost rule or the allow-list).
 */
export function normalizeHost(hostname: string): string {
  let end = hostname.length;
  while (end > 0 && hostname.charCodeAt(end - 1) === 46) end--;
  const host = end === hostname.length ? hostname : hostname.slice(0, end);
  return host.toLowerCase();
}

// RFC 4632 §3.1 / RFC 4291 §2.3: the prefix length is a decimal number of bits, 0 to 32 (IPv4) or 128 (IPv6).
const PREFIX_LENGTH = /^\d{1,3}$/;

// Characters a host name entry cannot hold: a URL would read them as a port, credentials, a path, a query or a
// fragment, or percent-decode them, and so compare something else than the entry says.
const NOT_IN_HOST_ENTRY = /[\s:@/?#\\%]/;

/**
 * A host name entry as URLs spell hosts (WHATWG URL host parsing: IDNA to punycode, lower case), so `bücher.example`
 * matches https://bücher.example/, whose host is `xn--bcher-kva.example`; throws TypeError on what no host can be.
 */
function hostEntry(field: EntryList, entry: string): string {
  let host = "";
  if (!NOT_IN_HOST_ENTRY.test(entry)) {
    try {
      host = new URL(`http://${entry}/`).hostname;
    } catch {
      // Not a host a URL can name: refused below.
    }
  }
  if (host === "") {
    throw new TypeError(`UrlPolicy.${field}: ${JSON.stringify(entry)} is not an address, a CIDR range or a host name.`);
  }
  return normalizeHost(host);
}

export type EntryList = "allow" | "deny";

/**
 * Reads the entries of `allow` or `deny`. Fails closed: an entry that is not exactly an address, `address/bits`
 * with bits a decimal within the family's range, or a host name is a TypeError naming it, never read as something
 * wider (`10.0.0.0/` is not `10.0.0.0/0`, which would allow every address) nor kept never matching.
 */
export function compileEntries(
  field: EntryList,
  entries: readonly string[] | undefined,
): { hosts: Set<string>; ranges: AddressRange[] } {
  const hosts = new Set<string>();
  const ranges: AddressRange[] = [];
  if (entries === undefined) return { hosts, ranges };
  // A bare string would be read one character at a time.
  if (!Array.isArray(entries)) throw new TypeError(`UrlPolicy.${field} must be an array of strings.`);
  for (const entry of entries) {
    if (typeof entry !== "string" || entry === "") {
      throw new TypeError(
        `UrlPolicy.${field}: an entry must be an address, a CIDR range or a host name, got ${JSON.stringify(entry)}.`,
      );
    }
    const slash = entry.indexOf("/");
    const address = slash === -1 ? entry : entry.slice(0, slash);
    const prefix = slash === -1 ? undefined : entry.slice(slash + 1);
    const network = parseIp(address);
    if (network === undefined) {
      if (prefix !== undefined) throw new TypeError(`Invalid CIDR in UrlPolicy.${field}: ${entry}`);
      const host = hostEntry(field, entry);
      const literal = parseIp(host);
      // A URL reads `0x7f.1` as 127.0.0.1: such an entry names that one address, as the URL's host would.
      if (literal === undefined) hosts.add(host);
      else ranges.push({ network: literal, bits: literal.length * 8 });
      continue;
    }
    if (prefix !== undefined && !PREFIX_LENGTH.test(prefix)) {
      throw new TypeError(
        `Invalid prefix length in UrlPolicy.${field}: ${entry} (expected 0 to ${network.length * 8} after one "/")`,
      );
    }
    const bits = prefix === undefined ? network.length * 8 : Number(prefix);
    if (bits > network.length * 8) {
      throw new TypeError(
        `Invalid prefix length in UrlPolicy.${field}: ${entry} (expected 0 to ${network.length * 8})`,
      );
    }
    ranges.push({ network, bits });
  }
  return { hosts, ranges };
}

/** Reads `ports`: integers 1 to 65535 (RFC 6335 §6: port 0 is reserved), at least one. */
export function compilePorts(ports: readonly number[] | undefined): ReadonlySet<number> | undefined {
  if (ports === undefined) return undefined;
  if (!Array.isArray(ports)) throw new TypeError("UrlPolicy.ports must be an array of port numbers.");
  // An empty list would refuse every URL: more likely a mistake than a wish.
  if (ports.length === 0) throw new TypeError("UrlPolicy.ports is empty; leave it out to allow every port.");
  for (const port of ports) {
    if (!Number.isInteger(port) || port < 1 || port > 65_535) {
      const shown = typeof port === "number" ? String(port) : JSON.stringify(port);
      throw new TypeError(`UrlPolicy.ports: ${shown} is not a port (an integer from 1 to 65535).`);
    }
  }
  return new Set(ports);
}
