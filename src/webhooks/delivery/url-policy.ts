import { type AddressClass, classifyAddressBytes } from "./address-class";
import { inPrefix, parseIp } from "./ip-address";

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
  | { code: "forbidden_address"; detail: string; addressClass: AddressClass; address: string };

/** The outcome of {@link checkEndpointUrl}. */
export type UrlCheck = { ok: true; url: URL } | ({ ok: false } & UrlRefusal);

/** A {@link UrlPolicy} compiled once for fast checks. */
export interface CompiledUrlPolicy {
  readonly allowHttp: boolean;
  readonly hosts: ReadonlySet<string>;
  readonly ranges: readonly { network: Uint8Array; bits: number }[];
}

/** Compiles a policy; throws TypeError on a malformed allow-list entry (programmer error). */
export function compileUrlPolicy(policy: UrlPolicy | CompiledUrlPolicy = {}): CompiledUrlPolicy {
  if ("ranges" in policy) return policy;
  const hosts = new Set<string>();
  const ranges: { network: Uint8Array; bits: number }[] = [];
  for (const entry of policy.allow ?? []) {
    const [address = "", prefix] = entry.split("/");
    const network = parseIp(address);
    if (network === undefined) {
      if (prefix !== undefined) throw new TypeError(`Invalid CIDR in UrlPolicy.allow: ${entry}`);
      hosts.add(entry.toLowerCase());
      continue;
    }
    const bits = prefix === undefined ? network.length * 8 : Number(prefix);
    if (!Number.isInteger(bits) || bits < 0 || bits > network.length * 8) {
      throw new TypeError(`Invalid prefix length in UrlPolicy.allow: ${entry}`);
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
    detail: `The address ${address} is ${addressClass.replace("_", "-")} and may not receive webhooks.`,
    addressClass,
    address,
  };
}

/**
 * Checks an endpoint URL at registration: absolute, HTTPS (unless allowed), no credentials, and a host that is not
 * a forbidden IP literal. Host names are checked again after DNS resolution, at send time.
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
    return { ok: false, code: "insecure_scheme", detail: `Webhook URLs must use https, not ${url.protocol}` };
  }
  if (url.username !== "" || url.password !== "") {
    return { ok: false, code: "invalid_url", detail: "The URL must not carry credentials." };
  }
  const host = bareHost(url.hostname);
  if (compiled.hosts.has(host.toLowerCase())) return { ok: true, url };
  if (parseIp(host) !== undefined) {
    const refusal = checkAddress(host, compiled);
    if (refusal !== undefined) return { ok: false, ...refusal };
  } else if (host === "localhost" || host.endsWith(".localhost")) {
    // RFC 6761 §6.3: localhost names always resolve to loopback.
    return {
      ok: false,
      code: "forbidden_address",
      detail: `The host ${host} is loopback and may not receive webhooks.`,
      addressClass: "loopback",
      address: host,
    };
  }
  return { ok: true, url };
}
