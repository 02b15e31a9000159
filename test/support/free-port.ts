/**
 * Ports for servers a test starts later, or never (a refused connection). Linux picks the local ports of outgoing
 * connections, and of `listen(0)`, from its ephemeral range (32,768 up, `net.ipv4.ip_local_port_range`): a port found
 * free there can be taken by another suite's connection before the server that wants it binds it, as happened once on
 * CI (port 36,310). The ports here lie below that range, where nothing but these helpers picks them.
 */
import { createServer } from "node:net";

// Apart from the Redis Cluster's ports (test/support/redis-cluster.ts): 20,000–22,767, and 30,000–32,767 for buses.
const FIRST = 23_000;
const LAST = 29_999;

/** Whether a server can listen on `port` of 127.0.0.1 now. */
export function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A port of 127.0.0.1 that nothing listens on now, outside the ephemeral range. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = FIRST + Math.floor(Math.random() * (LAST - FIRST + 1));
    if (await canListen(port)) return port;
  }
}
