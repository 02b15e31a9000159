/**
 * An HTTP CONNECT proxy on loopback (node:http's `connect` event), plain or over TLS, that records every CONNECT and
 * can refuse, answer nonsense or stay silent: what the dispatcher's egress proxy option is tested against.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { type AddressInfo, connect, type Socket } from "node:net";

/** What a proxy does with a CONNECT: open the tunnel, refuse it, answer nonsense, or say nothing. */
export type ProxyMode = "tunnel" | "refuse" | "garbage" | "silent";

export interface ConnectProxy {
  url: string;
  port: number;
  /** The authority of every CONNECT, in order, and its Proxy-Authorization. */
  connects: { authority: string; authorization: string | undefined }[];
  mode: ProxyMode;
  close(): Promise<void>;
}

/** A CONNECT proxy on loopback: plain HTTP, or HTTPS with `tls`'s key and certificate. */
export async function startConnectProxy(tls?: { key: Buffer; cert: Buffer }): Promise<ConnectProxy> {
  const sockets = new Set<Socket>();
  const refuse = (_req: IncomingMessage, res: ServerResponse) => res.writeHead(405).end();
  const server: Server = tls === undefined ? createHttpServer(refuse) : createHttpsServer(tls, refuse);
  const proxy: ConnectProxy = {
    url: "",
    port: 0,
    connects: [],
    mode: "tunnel",
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client);
    proxy.connects.push({ authority: req.url ?? "", authorization: req.headers["proxy-authorization"] });
    if (proxy.mode === "refuse") return client.end("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
    if (proxy.mode === "garbage") return client.end("SSH-2.0-OpenSSH_9.2\r\n\r\n");
    if (proxy.mode === "silent") return;
    const [host, port] = splitAuthority(req.url ?? "");
    const upstream = connect(port, host, () => {
      client.write("HTTP/1.1 200 Connection established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy.port = (server.address() as AddressInfo).port;
  proxy.url = `http://127.0.0.1:${proxy.port}`;
  return proxy;
}

function splitAuthority(authority: string): [string, number] {
  const at = authority.lastIndexOf(":");
  return [authority.slice(0, at).replace(/^\[|\]$/g, ""), Number(authority.slice(at + 1))];
}
