import type { Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import type { Handler } from "../../src/http/index";
import { createServer } from "../../src/node/index";

const REQUEST = "POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\nhi";

/**
 * Serves `handler` with `createServer` on a loopback port, sends it `times` requests from clients that each reset
 * the connection right after sending (see {@link sendThenReset}), and resolves once the server has closed: every
 * request was read (or refused) by then.
 */
export async function serveResetRequests(handler: Handler, times: number): Promise<void> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const { port } = server.address() as AddressInfo;
    for (let i = 0; i < times; i++) await sendThenReset(server, port, REQUEST);
    await new Promise((resolve) => server.close(resolve));
  } finally {
    server.closeAllConnections();
  }
}

/**
 * Opens a connection to `server` on `port`, waits until the server has accepted it, sends `raw` and resets the
 * connection at once (RST): a client that vanishes right after its request. Resolves once the socket has closed.
 */
export async function sendThenReset(server: Server, port: number, raw: string): Promise<void> {
  // Accepted first: a connection reset before the server even accepted it has no peer to read at all.
  const accepted = new Promise((resolve) => server.once("connection", resolve));
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => undefined);
  await Promise.all([accepted, new Promise((resolve) => socket.once("connect", resolve))]);
  socket.write(raw);
  socket.resetAndDestroy();
  await new Promise((resolve) => socket.once("close", resolve));
}
