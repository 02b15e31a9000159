import { inPrefix, parseIp } from "../../http/ip-address";
import { type AddressClass, classifyAddressBytes } from "./address-class";

// Said with every refusal a developer meets on a laptop: how the server's operator allows local URLs.
const LOCAL_HINT =
  " For local development the server's operator can allow http:// and local addresses with the URL policy: " +
  '{ allowHttp: true, allow: ["127.0.0.1", "localhost"] }.';

/** Where webhooks may be sent. The default refuses plain HTTP and every non-public address. */
export interface UrlPolicy {
  /**
   * Accept `http:` URLs (local development and tests only).
   * @default false
   */
  allowHttp?: boolean;
  /**
   * Addresses (`127.0.0.1`), CIDR ranges (`10.0.0.0/8`, `fd00::/8`) or exact host names (`localhost`) that are
   * reachable even though they are not public. Meant for local development and tests.
   * @default []
   */
  allow?: readonly string[];
}

/** Why a URL or an address is refused. */
export type UrlRefusal =
  | { code: "invalid_url"; detail: string }
  | { code: "insecure_scheme"; detail: string }
  | { code: "forbidden_address"; detail: string; addressClass: AddressClass; address: string }
  | { code: "unresolvable_host"; detail: string; host: string };

/** One address a host name resolved to (the shape of node:dns `lookup(host, { all: true })`). */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: number;
}

/**
 * Resolves a host name to all its addresses. Injected: the core does no DNS; `rest-webhooks/webhooks/delivery/node` has the
 * system resolver (`systemResolver`, node:dns `lookup` with `all: true`).
 */
export type HostResolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** The outcome of {@link checkEndpointUrl}. */
export type UrlCheck = { ok: true; url: URL } | ({ ok: false } & UrlRefusal);

/** A {@link UrlPolicy} compiled once for fast checks. */
export interface CompiledUrlPolicy {
  readonly allowHttp: boolean;
  readonly hosts: ReadonlySet<string>;
  readonly ranges: readonly { network: Uint8Array; bits: number }[];
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
function hostEntry(entry: string): string {
  let host = "";
  if (!NOT_IN_HOST_ENTRY.test(entry)) {
    try {
      host = new URL(`http://${entry}/`).hostname;
    } catch {
      // Not a host a URL can name: refused below.
    }
  }
  if (host === "") {
    throw new TypeError(`UrlPolicy.allow: ${JSON.stringify(entry)} is not an address, a CIDR range or a host name.`);
  }
  return normalizeHost(host);
}

/**
 * Compiles a policy; throws TypeError on a malformed allow-list entry (programmer error). Fails closed: an entry that
 * is not exactly an address, `address/bits` with bits a decimal within the family's range, or a host name is refused,
 * never read as something wider (`10.0.0.0/` is not `10.0.0.0/0`, which would allow every address).
 */
export function compileUrlPolicy(policy: UrlPolicy | CompiledUrlPolicy = {}): CompiledUrlPolicy {
  if ("ranges" in policy) return policy;
  const hosts = new Set<string>();
  const ranges: { network: Uint8Array; bits: number }[] = [];
  for (const entry of policy.allow ?? []) {
    if (typeof entry !== "string" || entry === "") {
      throw new TypeError(
        `UrlPolicy.allow: an entry must be an address, a CIDR range or a host name, got ${JSON.stringify(entry)}.`,
      );
    }
    const slash = entry.indexOf("/");
    const address = slash === -1 ? entry : entry.slice(0, slash);
    const prefix = slash === -1 ? undefined : entry.slice(slash + 1);
    const network = parseIp(address);
    if (network === undefined) {
      if (prefix !== undefined) throw new TypeError(`Invalid CIDR in UrlPolicy.allow: ${entry}`);
      const host = hostEntry(entry);
      const literal = parseIp(host);
      // A URL reads `0x7f.1` as 127.0.0.1: such an entry names that one address, as the URL's host would.
      if (literal === undefined) hosts.add(host);
      else ranges.push({ network: literal, bits: literal.length * 8 });
      continue;
    }
    if (prefix !== undefined && !PREFIX_LENGTH.test(prefix)) {
      throw new TypeError(
        `Invalid prefix length in UrlPolicy.allow: ${entry} (expected 0 to ${network.length * 8} after one "/")`,
      );
    }
    const bits = prefix === undefined ? network.length * 8 : Number(prefix);
    if (bits > network.length * 8) {
      throw new TypeError(`Invalid prefix length in UrlPolicy.allow: ${entry} (expected 0 to ${network.length * 8})`);
    }
    ranges.push({ network, bits });
  }
  return { allowHttp: policy.allowHttp ?? false, hosts, ranges };
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

/**
 * Checks one resolved (or literal) address against the policy: `undefined` when it may be reached.
 * Run at registration for IP literals and again at connect time for every address DNS returns.
 */
export function checkAddress(
  address: string,
  policy: CompiledUrlPolicy,
): Extract<UrlRefusal, { code: "forbidden_address" }> | undefined {
  const bytes = parseIp(address);
  if (bytes === undefined) {
    return {
      code: "forbidden_address",
      detail: `"${address}" is not an IP address.`,
      addressClass: "reserved",
      address,
    };
  }
  for (const range of policy.ranges) if (inPrefix(bytes, range.network, range.bits)) return undefined;
  const addressClass = classifyAddressBytes(bytes);
  if (addressClass === "public") return undefined;
  return {
    code: "forbidden_address",
    detail: `The address ${address} is ${addressClass.replace("_", "-")} and may not receive webhooks.${LOCAL_HINT}`,
    addressClass,
    address,
  };
}

/**
 * Checks an endpoint URL at registration: absolute, HTTPS (unless allowed), no credentials, and a host that is not
 * a forbidden IP literal or a localhost name. Synchronous, without DNS: {@link checkResolvedEndpointUrl} also checks
 * what a host name resolves to, and the dispatcher checks again at connect time.
 * @example checkEndpointUrl("https://10.0.0.5/hook") // { ok: false, code: "forbidden_address", addressClass: "private", ... }
 */
export function checkEndpointUrl(input: string, policy: UrlPolicy | CompiledUrlPolicy = {}): UrlCheck {
  const compiled = compileUrlPolicy(policy);
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return { ok: false, code: "invalid_url", detail: "The URL is not an absolute URL." };
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && compiled.allowHttp)) {
    return {
      ok: false,
      code: "insecure_scheme",
      detail: `Webhook URLs must use https, not ${url.protocol}${LOCAL_HINT}`,
    };
  }
  if (url.username !== "" || url.password !== "") {
    return { ok: false, code: "invalid_url", detail: "The URL must not carry credentials." };
  }
  // RFC 6335 §6: port 0 is reserved; nothing listens on it, so every delivery would fail to connect.
  if (url.port === "0") return { ok: false, code: "invalid_url", detail: "The URL's port must not be 0." };
  const host = normalizeHost(bareHost(url.hostname));
  if (compiled.hosts.has(host)) return { ok: true, url };
  if (parseIp(host) !== undefined) {
    const refusal = checkAddress(host, compiled);
    if (refusal !== undefined) return { ok: false, ...refusal };
  } else if (host === "localhost" || host.endsWith(".localhost")) {
    // RFC 6761 §6.3: localhost names always resolve to loopback.
    return {
      ok: false,
      code: "forbidden_address",
      detail: `The host ${host} is loopback and may not receive webhooks.${LOCAL_HINT}`,
      addressClass: "loopback",
      address: host,
    };
  }
  return { ok: true, url };
}

/**
 * Whether a URL accepted by {@link checkEndpointUrl} names a host whose addresses still need checking: a name that
 * is not allow-listed (an IP literal was checked already). Returns the name to resolve, or `undefined`.
 */
function hostToResolve(url: URL, policy: UrlPolicy | CompiledUrlPolicy = {}): string | undefined {
  const host = bareHost(url.hostname);
  const normal = normalizeHost(host);
  if (compileUrlPolicy(policy).hosts.has(normal) || parseIp(normal) !== undefined) return undefined;
  return host;
}

/**
 * Why a host name is refused, for the one who registered it: the class of the forbidden address, never the address.
 * The name was resolved by the provider's own resolver, so the address may be an internal one (`db.internal` →
 * 10.20.0.5), and naming it would make registration, or the delivery log, a map of the provider's network.
 */
export function resolvedRefusalDetail(host: string, addressClass: AddressClass): string {
  return `The host ${host} resolves to an address that is ${addressClass.replace("_", "-")}; it may not receive webhooks.`;
}

/**
 * Checks every address a host name resolved to: refused when ANY of them is forbidden (no partial trust: a
 * resolver may hand out any of them), or when there is none. Pure: the caller resolves.
 * @example checkResolvedAddresses("evil.example", [{ address: "127.0.0.1", family: 4 }]) // forbidden_address
 */
export function checkResolvedAddresses(
  host: string,
  addresses: readonly ResolvedAddress[],
  policy: UrlPolicy | CompiledUrlPolicy = {},
): UrlRefusal | undefined {
  const compiled = compileUrlPolicy(policy);
  if (addresses.length === 0) {
    return { code: "unresolvable_host", detail: `The host ${host} has no address.`, host };
  }
  for (const entry of addresses) {
    const refusal = checkAddress(entry.address, compiled);
    if (refusal !== undefined) {
      return { ...refusal, detail: resolvedRefusalDetail(host, refusal.addressClass) };
    }
  }
  return undefined;
}

/**
 * {@link checkEndpointUrl}, then the addresses the host name resolves to through `resolve` ({@link
 * checkResolvedAddresses}): `https://127.0.0.1.nip.io/` or a name pointing at 10.0.0.5 is refused at registration.
 * A name that does not resolve is refused as `unresolvable_host`. The dispatcher checks again on every connection,
 * since DNS can change after registration.
 * @example await checkResolvedEndpointUrl("https://hooks.example.com/in", systemResolver)
 */
export async function checkResolvedEndpointUrl(
  input: string,
  resolve: HostResolver,
  policy: UrlPolicy | CompiledUrlPolicy = {},
): Promise<UrlCheck> {
  const compiled = compileUrlPolicy(policy);
  const checked = checkEndpointUrl(input, compiled);
  if (!checked.ok) return checked;
  const host = hostToResolve(checked.url, compiled);
  if (host === undefined) return checked;
  let addresses: readonly ResolvedAddress[];
  try {
    addresses = await resolve(host);
  } catch (error) {
    const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
    return {
      ok: false,
      code: "unresolvable_host",
      detail: `The host ${host} could not be resolved${typeof code === "string" ? ` (${code})` : ""}.`,
      host,
    };
  }
  const refusal = checkResolvedAddresses(host, addresses, compiled);
  return refusal === undefined ? checked : { ok: false, ...refusal };
}
