import type { HttpRequest } from "../http/message";
import { nonNegativeInteger } from "../options/number-option";
import { refuseOption } from "../options/refuse-option";
import { addressKey } from "./address-key";

/** Options of {@link clientIp}. */
export interface ClientIpOptions {
  /**
   * Reverse proxies in front of the server that each append the address they saw. Only that many
   * entries, read from the right, are believed: anything further left was written by the client.
   * @default 0 (use the transport's peer address)
   */
  trustedProxies?: number;
  /**
   * The field the proxies write: `X-Forwarded-For` or RFC 7239 `Forwarded` (its `for=` parameter).
   * @default "x-forwarded-for"
   */
  header?: "x-forwarded-for" | "forwarded";
  /**
   * The leading bits of an IPv6 address that name one client: addresses in one prefix share a key. An IPv6 host
   * usually holds a whole /64 (RFC 4291 §2.5.1; SLAAC, RFC 4862) and changes address within it at will (RFC 8981), so
   * keyed per address it would get a fresh allowance from each of 2^64 addresses. `56` or `48` group a site's whole
   * delegation (RFC 6177); `128` keys each address. IPv4 addresses, IPv4-mapped ones, NAT64's `64:ff9b::/96`,
   * Teredo's `2001::/32` (the client IPv4 it carries) and 6to4's `2002::/16` (the IPv4 host whose /48 it is, RFC 3056)
   * included, are keyed each alone as that IPv4 address, whatever this prefix; so are addresses where a prefix is not
   * one host: link-local ones (with their zone), `::1`, and those in `64:ff9b:1::/48`. A 6rd address (RFC 5969)
   * does not show the IPv4 inside it (its prefix is the ISP's own): set this to the ISP's 6rd delegation length to
   * give such a site one key.
   * @default 64
   */
  ipv6Prefix?: number;
}

// RFC 7239 §4: node = nodename [":" node-port]; an IPv6 nodename is bracketed.
function nodename(node: string): string {
  let value = node.trim();
  if (value.startsWith("[")) {
    const end = value.indexOf("]");
    value = end === -1 ? value.slice(1) : value.slice(1, end);
  } else if (value.indexOf(":") !== -1 && value.indexOf(":") === value.lastIndexOf(":")) {
    value = value.slice(0, value.indexOf(":")); // IPv4 with a port
  }
  return value;
}

// RFC 9110 §5.6.4: inside a quoted-string a quote is escaped by a backslash, itself escapable, so a quote preceded by
// an odd run of backslashes is part of the text.
function escaped(value: string, quote: number): boolean {
  let run = 0;
  while (quote - run - 1 >= 0 && value[quote - run - 1] === "\\") run++;
  return run % 2 === 1;
}

/**
 * Splits at each `separator` outside quoted-strings, scanning from the right. RFC 7239 §4: proxies append, so the
 * elements the trusted proxies wrote are the rightmost, and they are well formed; read from the right they are
 * parsed before any client-written text, which cannot pull them into a quoted-string it left open.
 */
function splitFromRight(value: string, separator: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let end = value.length;
  for (let i = value.length - 1; i >= 0; i--) {
    const char = value[i];
    // From the right, a quote outside closes a quoted-string and one inside opens it, unless escaped.
    if (char === '"') {
      if (!quoted) quoted = true;
      else if (!escaped(value, i)) quoted = false;
    } else if (char === separator && !quoted) {
      parts.push(value.slice(i + 1, end));
      end = i;
    }
  }
  parts.push(value.slice(0, end));
  return parts.reverse();
}

// RFC 7239 §4: Forwarded = 1#forwarded-element; forwarded-element = [ forwarded-pair ] *( ";" [ forwarded-pair ] )
function forwardedFor(value: string): string[] {
  return splitFromRight(value, ",").map((element) => {
    for (const pair of splitFromRight(element, ";")) {
      const eq = pair.indexOf("=");
      if (eq !== -1 && pair.slice(0, eq).trim().toLowerCase() === "for") {
        const raw = pair.slice(eq + 1).trim();
        return raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, "$1") : raw;
      }
    }
    return ""; // no "for": the proxy did not say who sent it
  });
}

/**
 * The client named by a trusted hop, or `undefined` when the hop names nobody: an empty entry, an
 * element without `for=`, or RFC 7239 §6.2 `unknown`. Those are not addresses, and keying on them
 * would put every such client in one bucket. Obfuscated identifiers (§6.3 `_hidden`) are kept:
 * a proxy that uses them gives each client its own.
 */
function named(hop: string, ipv6Prefix: number): string | undefined {
  const node = nodename(hop);
  return node === "" || node.toLowerCase() === "unknown" ? undefined : addressKey(node, ipv6Prefix);
}

/**
 * The client's address, read from the right of the forwarding chain past `trustedProxies` proxies.
 *
 * `undefined` when no address is known: the adapter knows no peer address (Fetch runtimes) and no
 * proxy is trusted, or the entry the last trusted proxy wrote names nobody (`for=unknown`, a
 * `Forwarded` element without `for=`, an empty `X-Forwarded-For` entry). Choose what such requests
 * share: `rateLimit` leaves a request whose key is `undefined` unlimited, so add `?? "unidentified"`
 * to limit them together instead.
 * @param request the request's header fields and the transport's peer address.
 * @param options how many proxies to trust, and which field they write.
 * @returns the key of the address (IPv4 as dotted decimal, an IPv4-mapped, NAT64, Teredo or 6to4 one included; IPv6
 *   as its `ipv6Prefix` prefix, `2001:db8:1:2::/64`, in RFC 5952 form, or whole where a prefix is not one host:
 *   `fe80::1%eth0`, `::1`), an obfuscated identifier, or `undefined`.
 * @throws TypeError when `trustedProxies` is not a non-negative integer, `header` is neither `"x-forwarded-for"` nor
 *   `"forwarded"`, or `ipv6Prefix` is not an integer from 1 to 128.
 * @see RFC 7239 §4, §6 (`Forwarded`)
 * @example
 * // Behind one load balancer; requests it cannot attribute share one bucket.
 * key: (request) => clientIp(request, { trustedProxies: 1 }) ?? "unidentified"
 */
export function clientIp(
  request: Pick<HttpRequest, "headers" | "remoteAddress">,
  options: ClientIpOptions = {},
): string | undefined {
  const trusted = nonNegativeInteger("clientIp", "trustedProxies", options.trustedProxies ?? 0);
  const name = options.header ?? "x-forwarded-for";
  // Any other name (a capitalised one, X-Real-IP) was found absent and the peer returned: the proxy's address.
  if (name !== "x-forwarded-for" && name !== "forwarded") {
    throw new TypeError(`clientIp: header must be "x-forwarded-for" or "forwarded", got ${JSON.stringify(name)}.`);
  }
  const ipv6Prefix = options.ipv6Prefix ?? 64;
  if (typeof ipv6Prefix !== "number" || !Number.isInteger(ipv6Prefix) || ipv6Prefix < 1 || ipv6Prefix > 128) {
    refuseOption("clientIp", "ipv6Prefix", ipv6Prefix, "an integer from 1 to 128");
  }
  const peer =
    request.remoteAddress === undefined ? undefined : addressKey(nodename(request.remoteAddress), ipv6Prefix);
  if (trusted === 0) return peer;
  const field = request.headers[name];
  const hops = field === undefined ? [] : name === "forwarded" ? forwardedFor(field) : field.split(",");
  // hops + [peer]: each trusted proxy vouches for the entry to its left.
  const index = hops.length - trusted;
  if (index < 0) return hops.length > 0 ? named(hops[0] as string, ipv6Prefix) : peer;
  return named(hops[index] as string, ipv6Prefix);
}
