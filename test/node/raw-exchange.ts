/** Raw-socket exchanges with a server, for requests `fetch` and node:http's client cannot send. */
import type { Server } from "node:http";
import { type AddressInfo, connect } from "node:net";

/** What a server sent back on one connection, and whether it closed the connection before the time-out. */
export interface RawReply {
  readonly received: string;
  readonly closed: boolean;
}

/**
 * Writes `bytes` on a new connection and collects what comes back until the server closes it, or for `timeoutMs`
 * (then `closed` is false): a server that never answers fails the test instead of hanging it. The client does not end
 * its side first unless `end`, so a close is the server's own.
 */
export function exchange(port: number, bytes: string, options: { timeoutMs?: number; end?: boolean } = {}) {
  return new Promise<RawReply>((resolve) => {
    let received = "";
    const socket = connect(port, "127.0.0.1", () => (options.end ? socket.end(bytes) : socket.write(bytes)));
    const done = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ received, closed });
    };
    const timer = setTimeout(() => done(false), options.timeoutMs ?? 2_000);
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (received += chunk));
    socket.on("close", () => done(true));
    socket.on("error", () => done(true));
  });
}

/** One response read off the wire: its status line, lower-cased head and JSON body (read by its Content-Length). */
export interface RawResponse {
  readonly statusLine: string;
  readonly status: number;
  readonly head: string;
  readonly body: unknown;
}

/** The responses in `received`, one after the other; what follows the last whole one is left out. */
export function responses(received: string): RawResponse[] {
  const found: RawResponse[] = [];
  let rest = received;
  for (let end = rest.indexOf("\r\n\r\n"); end !== -1; end = rest.indexOf("\r\n\r\n")) {
    const statusLine = rest.slice(0, rest.indexOf("\r\n"));
    const head = rest.slice(0, end).toLowerCase();
    const length = Number(/^content-length: *(\d+)$/m.exec(head)?.[1] ?? 0);
    // Read as latin1, one character a byte, so Content-Length counts characters; the body itself is UTF-8.
    const text = Buffer.from(rest.slice(end + 4, end + 4 + length), "latin1").toString("utf8");
    const status = Number(statusLine.slice(9, 12));
    found.push({ statusLine, status, head, body: text === "" ? undefined : JSON.parse(text) });
    rest = rest.slice(end + 4 + length);
  }
  return found;
}

/** The status lines of every response in `received`: more than one final response to one request is a corrupt stream. */
export const statusLines = (received: string) => responses(received).map((response) => response.statusLine);

/** The first response in `received`. */
export function firstResponse(received: string): RawResponse {
  const [first] = responses(received);
  if (first === undefined) throw new Error(`no whole response in ${JSON.stringify(received)}`);
  return first;
}

/** Starts `server` on 127.0.0.1 and keeps it for `closeAll`. */
export async function listen(servers: Server[], server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

/** Closes every server `listen` started, connections included. */
export async function closeAll(servers: Server[]): Promise<void> {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}
