import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A request the local consumer received. */
export interface Received {
  headers: IncomingMessage["headers"];
  body: string;
  socket: number;
}

/** A loopback HTTP server for dispatcher and worker tests; `reply` decides each answer. */
export async function localServer(
  reply: (req: Received, res: ServerResponse, index: number) => void = (_r, res) => res.end("ok"),
): Promise<{
  url: string;
  port: number;
  received: Received[];
  connections: () => number;
  maxActive: () => number;
  close: () => Promise<void>;
  server: Server;
}> {
  const received: Received[] = [];
  let sockets = 0;
  let active = 0;
  let maxActive = 0;
  const socketIds = new WeakMap<object, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const entry = {
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        socket: socketIds.get(req.socket) ?? -1,
      };
      received.push(entry);
      active++;
      maxActive = Math.max(maxActive, active);
      res.on("close", () => active--);
      reply(entry, res, received.length - 1);
    });
  });
  server.on("connection", (socket) => socketIds.set(socket, ++sockets));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    received,
    connections: () => sockets,
    maxActive: () => maxActive,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
