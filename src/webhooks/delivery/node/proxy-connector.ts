import { isIP, type LookupFunction, connect as netConnect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import type { buildConnector } from "undici";
import { timerDelay } from "../../../options/timer-delay";
import { codedError, PROXY_CODE } from "./error-kind";
import { type EgressProxy, readTunnelAnswer, tunnelAuthority, tunnelRequest } from "./proxy-tunnel";

/** Resolves `hostname` through the SSRF-guarded lookup: the first address every check let through. */
function checkedAddress(lookup: LookupFunction, hostname: string): Promise<string> {
  if (isIP(hostname) !== 0) return Promise.resolve(hostname); // an IP literal was checked with the URL
  return new Promise((resolve, reject) => {
    lookup(hostname, { family: 0 }, (error, address) => {
      if (error !== null) reject(error);
      else resolve(address as string);
    });
  });
}

/** Opens a connection to the proxy itself: TCP, or TLS to an https:// proxy. */
function proxySocket(proxy: EgressProxy): Socket {
  if (proxy.protocol === "http:") return netConnect({ host: proxy.host, port: proxy.port });
  return tlsConnect({
    host: proxy.host,
    port: proxy.port,
    ...(isIP(proxy.host) === 0 ? { servername: proxy.host } : {}),
  });
}

/**
 * Sends CONNECT on `socket` and settles once the proxy has answered: the socket then carries the tunnel. It reads in
 * paused mode (`readable`, `read()`), as undici does, so no byte of the tunnel is lost between the two.
 */
function openTunnel(socket: Socket, authority: string, proxy: EgressProxy): Promise<void> {
  return new Promise((resolve, reject) => {
    let received: Buffer = Buffer.alloc(0);
    const done = () => {
      socket.off("readable", onReadable);
      socket.off("end", onEnd);
    };
    const onEnd = () => {
      done();
      reject(codedError(PROXY_CODE, `The proxy ${proxy.label} closed the connection before answering CONNECT.`));
    };
    const onReadable = () => {
      for (let chunk: Buffer | null = socket.read(); chunk !== null; chunk = socket.read()) {
        received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
        const answer = readTunnelAnswer(received);
        if (answer.kind === "incomplete") continue;
        done();
        if (answer.kind === "open") {
          // RFC 9110 §9.3.6: what follows the head is the tunnel's first bytes.
          if (answer.headBytes < received.length) socket.unshift(received.subarray(answer.headBytes));
          resolve();
        } else if (answer.kind === "refused") {
          const why = `${answer.status} ${answer.reason}`.trimEnd();
          reject(codedError(PROXY_CODE, `The proxy ${proxy.label} refused a tunnel to ${authority}: ${why}`));
        } else {
          reject(codedError(PROXY_CODE, `The proxy ${proxy.label} answered CONNECT with no HTTP status line.`));
        }
        return;
      }
    };
    socket.on("readable", onReadable);
    socket.once("end", onEnd);
    socket.write(tunnelRequest(authority, proxy));
  });
}

/**
 * An undici connector that reaches every origin through an HTTP CONNECT tunnel of `proxy`. The endpoint's name is
 * resolved and checked here, by the SSRF-guarded `lookup`, and the proxy is asked for a tunnel to that checked
 * address: the proxy never resolves a name, so neither DNS answers the proxy sees nor its own rules can lead an
 * attempt to an address the policy forbids. TLS then runs end to end over the tunnel, with the endpoint's name as
 * SNI and as the name its certificate must carry.
 */
export function proxyConnector(
  proxy: EgressProxy,
  lookup: LookupFunction,
  timeoutMs: number,
): buildConnector.connector {
  return (options, callback) => {
    const { hostname, protocol } = options;
    const port = Number(options.port) || (protocol === "https:" ? 443 : 80);
    let socket: Socket | undefined;
    let settled = false;
    const settle = (error: Error | null, result: Socket | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error !== null) {
        socket?.destroy();
        callback(error, null);
      } else callback(null, result as Socket);
    };
    const timer = setTimeout(
      () =>
        settle(codedError("UND_ERR_CONNECT_TIMEOUT", `No tunnel through ${proxy.label} within ${timeoutMs} ms.`), null),
      // A time-out past a timer's reach fired at once: every tunnel failed.
      timerDelay(timeoutMs),
    );
    // The socket keeps the process alive while it connects; the timer alone must not hold a closing one.
    timer.unref();
    const fail = (error: Error) => settle(error, null);
    checkedAddress(lookup, hostname)
      .then((address): Promise<void> | undefined => {
        if (settled) return;
        const authority = tunnelAuthority(address, port);
        const toProxy = proxySocket(proxy);
        socket = toProxy;
        // Until the tunnel is open, a failure is the proxy's, not the endpoint's: the log says which.
        const unreachable = (error: Error) =>
          fail(codedError(PROXY_CODE, `Could not use the proxy ${proxy.label}: ${error.message}`, error));
        toProxy.once("error", unreachable);
        return openTunnel(toProxy, authority, proxy).then(() => {
          if (settled) return;
          toProxy.off("error", unreachable);
          if (protocol !== "https:") return settle(null, toProxy);
          // RFC 6066 §3: SNI carries names only, never an address.
          const name = isIP(hostname) === 0 ? { servername: hostname } : {};
          const secure = tlsConnect({ socket: toProxy, host: hostname, ...name });
          socket = secure;
          // The TLS socket is undici's from now on: a failure of the tunnel under it is reported there.
          toProxy.on("error", (error) => secure.destroy(error));
          secure.once("error", fail);
          secure.once("secureConnect", () => {
            secure.off("error", fail);
            settle(null, secure);
          });
        });
      })
      .catch(fail);
  };
}
