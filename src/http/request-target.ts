import { badRequestTarget } from "./adapter-options";
import { parseIPv6 } from "./ip-address";
import type { HttpProblem, HttpProblemCode } from "./problem";

/** An absolute-form request-target or URL, split as a server reads it (RFC 9112 §3.2.2). */
export interface AbsoluteTarget {
  /** The authority as sent, userinfo included: what {@link isAuthority} checks (RFC 3986 §3.2). */
  readonly authority: string;
  /**
   * The host (and port) as a Host header carries it: the authority without a userinfo (RFC 9110 §4.2.4: deprecated,
   * and never part of Host); `undefined` when the authority is empty.
   */
  readonly host: string | undefined;
  /** The path and query in origin-form, without the fragment; "/" when there is no path (RFC 9112 §3.2.1). */
  readonly originForm: string;
}

/**
 * Splits an absolute-form request-target (which a server MUST accept, RFC 9112 §3.2.2) into its host and its
 * origin-form: the path a Fetch `Request` URL gives, so both adapters route such a request alike.
 * @returns `undefined` when `url` has no "scheme://".
 */
export function splitAbsoluteTarget(url: string): AbsoluteTarget | undefined {
  const scheme = url.indexOf("://");
  if (scheme === -1) return undefined;
  const start = scheme + 3;
  const hash = url.indexOf("#", start);
  const end = hash === -1 ? url.length : hash;
  const q = url.indexOf("?", start);
  const query = q === -1 || q > end ? end : q;
  // The authority ends at the first "/", "?" or "#" (RFC 3986 §3.2).
  const slash = url.indexOf("/", start);
  const path = slash === -1 || slash > query ? query : slash;
  const authority = url.slice(start, path);
  const host = authority.slice(authority.lastIndexOf("@") + 1);
  return {
    authority,
    host: host === "" ? undefined : host,
    originForm: `${path === query ? "/" : url.slice(path, query)}${url.slice(query, end)}`,
  };
}

// RFC 3986 §3.2.2: reg-name = *( unreserved / pct-encoded / sub-delims ); every IPv4address is one as well.
const REG_NAME = /^(?:[\w\-.~!$&'()*+,;=]|%[\dA-Fa-f]{2})*$/;
// The Host of nearly every request, checked by one expression (createServer checks every request's): a reg-name
// without "%", and a port if any, of at most 5 digits naming a TCP port (RFC 9293 §3.1: 0..65535), so a server on
// an ephemeral or other 5-digit port takes this path too.
const PLAIN_HOST = /^[\w\-.~!$&'()*+,;=]*(?::(?:\d{0,4}|[0-5]\d{4}|6[0-4]\d{3}|65[0-4]\d\d|655[0-2]\d|6553[0-5]))?$/;
// RFC 3986 §3.2.2: IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" ).
const IP_FUTURE = /^v[\dA-Fa-f]+\.[\w\-.~!$&'()*+,;=:]+$/i;
// RFC 3986 §3.2.2: host = IP-literal / IPv4address / reg-name; IP-literal = "[" ( IPv6address / IPvFuture ) "]".
function isUriHost(host: string): boolean {
  if (host.charCodeAt(0) !== 0x5b /* [ */) return REG_NAME.test(host);
  if (!host.endsWith("]")) return false;
  const literal = host.slice(1, -1);
  // RFC 3986's IPv6address has no zone ("%"), which the SSRF checks' parser takes (RFC 4291 text).
  return (!literal.includes("%") && parseIPv6(literal) !== undefined) || IP_FUTURE.test(literal);
}

// RFC 3986 §3.2.3: port = *DIGIT; above 65535 it names no TCP port (RFC 9293 §3.1), and a URL parser refuses it.
const isPort = (port: string) => /^\d*$/.test(port) && (port.length < 5 || Number(port) <= 65_535);

/**
 * Whether `value` is a valid Host field value: uri-host [ ":" port ] (RFC 9110 §7.2), with no userinfo; empty is
 * valid (a target URI without an authority). A server MUST answer 400 to a request whose Host is not (RFC 9112 §3.2).
 */
export function isHostValue(value: string): boolean {
  if (PLAIN_HOST.test(value)) return true;
  // The port follows the last ":" that is not inside an IP-literal's brackets.
  const colon = value.lastIndexOf(":");
  if (colon === -1 || colon < value.lastIndexOf("]")) return isUriHost(value);
  return isUriHost(value.slice(0, colon)) && isPort(value.slice(colon + 1));
}

/**
 * Whether `authority`, [ userinfo "@" ] host [ ":" port ] (RFC 3986 §3.2), names a host and port: the part after the
 * last "@" is checked as {@link isHostValue}. The userinfo is not: the adapters refuse any in an http(s) target (RFC
 * 9110 §4.2.4), and a URL parser percent-encodes what RFC 3986 would refuse there (`a@b@c`) rather than refuse the
 * URL. Only an absolute-form target needs the check: an origin-form one has no authority, and a Fetch `Request`'s URL
 * was parsed by the runtime.
 * @example isAuthority("shop.example:8443") // true; isAuthority("[::1") and isAuthority("x:99999") are false
 */
export function isAuthority(authority: string): boolean {
  return isHostValue(authority.slice(authority.lastIndexOf("@") + 1));
}

/**
 * The 400 `bad_request_target` for an absolute-form target whose authority has a userinfo (`http://user:pw@host/`),
 * `undefined` when it has none. RFC 9110 §4.2.4: a sender MUST NOT put one in an http(s) URI, and a recipient SHOULD
 * treat one as an error (it is likely there to obscure the host). Both adapters answer it alike.
 */
export function userinfoProblem(authority: string): HttpProblem<HttpProblemCode> | undefined {
  // RFC 3986 §3.2: "@" ends a userinfo and is in no host, so any "@" in an authority means one.
  if (!authority.includes("@")) return undefined;
  return badRequestTarget(
    "The request target's URI carries a userinfo, which an http(s) URI must not (RFC 9110 §4.2.4).",
  );
}
