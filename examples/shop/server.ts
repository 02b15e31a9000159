import type { AddressInfo } from "node:net";
import type { Handler } from "rest-webhooks/http";
import { createServer } from "rest-webhooks/node";

/** A node:http server that is listening, with its base URL. */
export interface Listening {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Serves a handler on node:http (bodies over `bodyLimit` get 413) and resolves once it listens.
 * @param port 0 picks a free port.
 */
export function listen(
  handler: Handler,
  options: { port: number; host: string; bodyLimit?: number },
): Promise<Listening> {
  const server = createServer(handler, options.bodyLimit === undefined ? {} : { bodyLimit: options.bodyLimit });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      const { port } = server.address() as AddressInfo;
      const host = options.host.includes(":") ? `[${options.host}]` : options.host;
      resolve({
        url: `http://${host}:${port}`,
        port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
