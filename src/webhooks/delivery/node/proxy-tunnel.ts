// An HTTP CONNECT tunnel through an egress proxy, as plain values: the proxy an option names, the request that opens
// a tunnel to one address, and what the proxy's answer says. No sockets here: proxy-connector.ts owns them.
import { bareHost } from "../url-policy";

/** An egress proxy, parsed from the URL an option gives. */
export interface EgressProxy {
  readonly protocol: "http:" | "https:";
  /** Host name or address, IPv6 without brackets. */
  readonly host: string;
  readonly port: number;
  /** `Proxy-Authorization` from the URL's user and password (Basic, RFC 7617), if it has any. */
  readonly authorization: string | undefined;
  /** `host:port`, for messages: never the credentials. */
  readonly label: string;
}

/** The longest answer head read from a proxy before the tunnel is refused. */
export const MAX_TUNNEL_HEAD_BYTES = 16_384;

/**
 * Parses an egress proxy URL (`http://proxy:3128`, `https://user:pass@proxy`), or throws a `TypeError` naming
 * `option`: a proxy that cannot be used is a configuration error, found at construction rather than at the first
 * attempt.
 */
export function parseEgressProxy(url: string | URL, option: string): EgressProxy {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`${option} must be a URL such as http://proxy.internal:3128`);
  }
  const { protocol } = parsed;
  if (protocol !== "http:" && protocol !== "https:") {
    throw new TypeError(`${option} must be an http:// or https:// URL (the proxy's own scheme), not ${protocol}`);
  }
  if (parsed.hostname === "") throw new TypeError(`${option} has no host`);
  if ((parsed.pathname !== "/" && parsed.pathname !== "") || parsed.search !== "" || parsed.hash !== "") {
    throw new TypeError(`${option} must name the proxy only (scheme, credentials, host, port), not a path or query`);
  }
  const port = parsed.port === "" ? (protocol === "https:" ? 443 : 80) : Number(parsed.port);
  const hasCredentials = parsed.username !== "" || parsed.password !== "";
  let credentials: string;
  try {
    credentials = `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`;
  } catch {
    // A bare URIError ("URI malformed") said neither which option nor what was wrong with it.
    throw new TypeError(`${option} has a user or password that is not percent-encoded UTF-8`);
  }
  return {
    protocol,
    host: bareHost(parsed.hostname),
    port,
    authorization: hasCredentials ? `Basic ${Buffer.from(credentials, "utf8").toString("base64")}` : undefined,
    label: `${parsed.hostname}:${port}`,
  };
}

/** An address as the authority of a CONNECT request: IPv6 in brackets (RFC 9110 §9.3.6, RFC 3986 §3.2.2). */
export function tunnelAuthority(address: string, port: number): string {
  return address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;
}

/** The head of the request that asks `proxy` for a tunnel to `authority` (RFC 9110 §9.3.6, RFC 9112 §3.2.3). */
export function tunnelRequest(authority: string, proxy: EgressProxy): string {
  const authorization = proxy.authorization === undefined ? "" : `Proxy-Authorization: ${proxy.authorization}\r\n`;
  return `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${authorization}\r\n`;
}

/** What a proxy's answer to CONNECT says. */
export type TunnelAnswer =
  | { kind: "incomplete" }
  | { kind: "open"; headBytes: number }
  | { kind: "refused"; status: number; reason: string }
  | { kind: "malformed" };

const STATUS_LINE = /^HTTP\/1\.[01] (\d{3})(?: ([^\r\n]*))?\r\n/;

/**
 * Reads the head of a proxy's answer to CONNECT from the bytes received so far. RFC 9110 §9.3.6: any 2xx opens the
 * tunnel, and the bytes after the head are the tunnel's; anything else refuses it.
 */
export function readTunnelAnswer(received: Buffer): TunnelAnswer {
  const end = received.indexOf("\r\n\r\n");
  if (end === -1) return received.length > MAX_TUNNEL_HEAD_BYTES ? { kind: "malformed" } : { kind: "incomplete" };
  const head = received.toString("latin1", 0, end + 2);
  const match = STATUS_LINE.exec(head);
  if (match === null) return { kind: "malformed" };
  const status = Number(match[1]);
  if (status >= 200 && status < 300) return { kind: "open", headBytes: end + 4 };
  return { kind: "refused", status, reason: match[2] ?? "" };
}
