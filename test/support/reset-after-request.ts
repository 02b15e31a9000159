import type { Server } from "node:http";
import { connect } from "node:net";

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
