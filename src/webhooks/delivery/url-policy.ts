import { inPrefix, parseIp } from "../../http/ip-address";
import { type AddressClass, classifyAddressBytes, embeddedIpv4 } from "./address-class";
import { type AddressRange, bareHost, compileEntries, compilePorts, normalizeHost } from "./url-policy-entries";

export { bareHost, normalizeHost };

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
  /**
   * Addresses, CIDR ranges or exact host names refused even though public, written as `allow` entries: your own API
   * and admin hosts and ranges (a customer's URL on them would make you POST to yourself), cloud metadata names
   * (`metadata.google.internal`). Deny wins over `allow`. Checked on the URL's host at registration and on every
   * address a name resolves to, at registration and at connect time; an IPv4 entry also covers its IPv4-mapped,
   * IPv4-translated, NAT64, 6to4 (RFC 3056) and Teredo (RFC 4380, the client's address) spellings. A refusal is
   * `forbidden_address` with `addressClass: "denied"`.
   * @default []
   * @example { deny: ["api.provider.example", "203.0.113.0/24", "metadata.google.internal"] }
   */
  deny?: readonly string[];
  /**
   * The destination ports deliveries may use, integers 1 to 65535; a URL names the scheme's default port (443, or 80
   * for `http:`) when it names none. A URL on another port is refused at registration (`invalid_url`) and at send
   * time (an endpoint stored before the list changed).
   * @default every port
   * @example { ports: [443, 8443] }
   */
  ports?: readonly number[];
}

/** Why a URL or an address is refused; `addressClass: "denied"` names an address or host the policy's `deny` holds. */
export type UrlRefusal =
  | { code: "invalid_url"; detail: string }
  | { code: "insecure_scheme"; detail: string }
  | { code: "forbidden_address"; detail: string; addressClass: AddressClass | "denied"; address: string }
  | { code: "unresolvable_host"; detail: string; host: string };

type AddressRefusal = Extract<UrlRefusal, { code: "forbidden_address" }>;

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
  /** Allowed host names. */
  readonly hosts: ReadonlySet<string>;
  /** Allowed addresses. */
  readonly ranges: readonly AddressRange[];
  readonly deniedHosts: ReadonlySet<string>;
  readonly deniedRanges: readonly AddressRange[];
  /** `undefined`: every port. */
  readonly ports: ReadonlySet<number> | undefined;
}

/**
 * Compiles a policy; throws TypeError on a malformed `allow`, `deny` or `ports` entry (programmer error), naming it.
 */
export function compileUrlPolicy(policy: UrlPolicy | CompiledUrlPolicy = {}): CompiledUrlPolicy {
  if ("ranges" in policy) return policy;
  const allowed = compileEntries("allow", policy.allow);
  const denied = compileEntries("deny", policy.deny);
  return {
    allowHttp: policy.allowHttp ?? false,
    hosts: allowed.hosts,
    ranges: allowed.ranges,
    deniedHosts: denied.hosts,
    deniedRanges: denied.ranges,
    ports: compilePorts(policy.ports),
  };
}

// Whether `deny` holds the address, or the IPv4 address it embeds (::ffff:a.b.c.d, 64:ff9b::a.b.c.d, 2002:V4ADDR::
// and a Teredo address's client reach a.b.c.d; see embeddedIpv4).
function isDenied(bytes: Uint8Array, policy: CompiledUrlPolicy): boolean {
  const reached = embeddedIpv4(bytes);
  for (const range of policy.deniedRanges) {
    if (inPrefix(bytes, range.network, range.bits)) return true;
    if (reached !== undefined && inPrefix(reached, range.network, range.bits)) return true;
  }
  return false;
}

/**
 * Checks one resolved (or literal) address against the policy: `undefined` when it may be reached.
 * Run at registration for IP literals and again at connect time for every address DNS returns.
 * @param nameAllowed the address is one of a host name `allow` holds: only `deny` applies to it.
 */
export function checkAddress(
  address: string,
  policy: CompiledUrlPolicy,
  nameAllowed = false,
): AddressRefusal | undefined {
  const bytes = parseIp(address);
  if (bytes === undefined) {
    return {
      code: "forbidden_address",
      detail: `"${address}" is not an IP address.`,
      addressClass: "reserved",
      address,
    };
  }
  // Deny wins over allow: an allow entry wide enough for development must not reopen what the operator denied.
  if (isDenied(bytes, policy)) {
    return {
      code: "forbidden_address",
      detail: `The address ${address} is denied by this server's URL policy and may not receive webhooks.`,
      addressClass: "denied",
      address,
    };
  }
  if (nameAllowed) return undefined;
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
 * Checks a host name against `deny` (exact names, compared as {@link normalizeHost} spells them): `undefined` when
 * it is not denied. Run at registration and again at send time, for endpoints stored before the entry was added.
 */
export function checkDeniedHost(hostname: string, policy: CompiledUrlPolicy): AddressRefusal | undefined {
  const host = normalizeHost(bareHost(hostname));
  if (!policy.deniedHosts.has(host)) return undefined;
  return {
    code: "forbidden_address",
    detail: `The host ${host} is denied by this server's URL policy and may not receive webhooks.`,
    addressClass: "denied",
    address: host,
  };
}

/**
 * Checks the URL's port against `ports` (RFC 3986 §3.2.3: no port written means the scheme's default, 443 for
 * https, 80 for http, RFC 9110 §4.2): `undefined` when allowed. Run at registration and again at send time, for
 * endpoints stored before the list changed.
 */
export function checkPort(url: URL, policy: CompiledUrlPolicy): { code: "invalid_url"; detail: string } | undefined {
  if (policy.ports === undefined) return undefined;
  const port = url.port === "" ? (url.protocol === "http:" ? 80 : 443) : Number(url.port);
  if (policy.ports.has(port)) return undefined;
  return {
    code: "invalid_url",
    detail: `Webhooks are not sent to port ${port}; the URL's port must be one of ${[...policy.ports].join(", ")}.`,
  };
}

/**
 * The checks of a parsed URL that need no network work: scheme, credentials, port, denied host name, IP literal,
 * localhost name. `undefined` when the URL itself may be used (what a name resolves to is not checked here). Run at
 * registration ({@link checkEndpointUrl}) and by the dispatcher before each attempt, where a refusal is `url_refused`:
 * it cannot pass until the policy or the URL changes. Internal to the module.
 */
export function checkUrlItself(url: URL, compiled: CompiledUrlPolicy): UrlRefusal | undefined {
  if (url.protocol !== "https:" && !(url.protocol === "http:" && compiled.allowHttp)) {
    return { code: "insecure_scheme", detail: `Webhook URLs must use https, not ${url.protocol}${LOCAL_HINT}` };
  }
  // RFC 9110 §4.2.4: userinfo is deprecated in http(s) URIs; a sender must not send it, a recipient should treat it
  // as an error (it may be there to obscure the authority). Refused rather than silently dropped at send time.
  if (url.username !== "" || url.password !== "") {
    return { code: "invalid_url", detail: "The URL must not carry credentials." };
  }
  // RFC 6335 §6: port 0 is reserved; nothing listens on it, so every delivery would fail to connect.
  if (url.port === "0") return { code: "invalid_url", detail: "The URL's port must not be 0." };
  const port = checkPort(url, compiled);
  if (port !== undefined) return port;
  const denied = checkDeniedHost(url.hostname, compiled);
  if (denied !== undefined) return denied;
  const host = normalizeHost(bareHost(url.hostname));
  if (compiled.hosts.has(host)) return undefined;
  if (parseIp(host) !== undefined) return checkAddress(host, compiled);
  if (host === "localhost" || host.endsWith(".localhost")) {
    // RFC 6761 §6.3: localhost names always resolve to loopback, whatever the resolver says.
    return {
      code: "forbidden_address",
      detail: `The host ${host} is loopback and may not receive webhooks.${LOCAL_HINT}`,
      addressClass: "loopback",
      address: host,
    };
  }
  return undefined;
}

/**
 * Checks an endpoint URL at registration: absolute, HTTPS (unless allowed), no credentials, not port 0, and a host
 * that is not a forbidden IP literal or a localhost name. Synchronous, without DNS: {@link checkResolvedEndpointUrl}
 * also checks what a host name resolves to, and the dispatcher checks again at connect time.
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
  const refusal = checkUrlItself(url, compiled);
  return refusal === undefined ? { ok: true, url } : { ok: false, ...refusal };
}

/**
 * Whether a URL accepted by {@link checkEndpointUrl} names a host whose addresses still need checking: a name that
 * is not allow-listed, or any name when `deny` holds addresses (an IP literal was checked already). Returns the name
 * to resolve, or `undefined`.
 */
function hostToResolve(url: URL, policy: CompiledUrlPolicy): string | undefined {
  const host = bareHost(url.hostname);
  const normal = normalizeHost(host);
  if (parseIp(normal) !== undefined) return undefined;
  if (policy.hosts.has(normal) && policy.deniedRanges.length === 0) return undefined;
  return host;
}

/**
 * Why a host name is refused, for the one who registered it: the class of the forbidden address, never the address.
 * The name was resolved by the provider's own resolver, so the address may be an internal one (`db.internal` →
 * 10.20.0.5), and naming it would make registration, or the delivery log, a map of the provider's network.
 */
export function resolvedRefusalDetail(host: string, addressClass: AddressClass | "denied"): string {
  return `The host ${host} resolves to an address that is ${addressClass.replace("_", "-")}; it may not receive webhooks.`;
}

/**
 * Checks every address a host name resolved to: refused when ANY of them is forbidden (no partial trust: a
 * resolver may hand out any of them), or when there is none. A name `allow` holds is checked against `deny` only.
 * Pure: the caller resolves.
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
  const nameAllowed = compiled.hosts.has(normalizeHost(host));
  for (const entry of addresses) {
    const refusal = checkAddress(entry.address, compiled, nameAllowed);
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
