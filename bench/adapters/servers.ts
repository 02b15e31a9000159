// The two servers bench/adapters compares: the same trivial JSON handler through the node adapter and
// written on bare node:http.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { empty, type Handler, json } from "../../src/http/message";
import { adapt } from "../../src/node/index";

/** GET /hello → {"hello":"world"} as a rest-webhooks handler. */
export const handler: Handler = (request) =>
  request.method === "GET" && request.path === "/hello" ? json(200, { hello: "world" }) : empty(404);

/** The same answer on bare node:http, written the way a careful hand would. */
function bare(req: IncomingMessage, res: ServerResponse): void {
  if (req.method === "GET" && req.url === "/hello") {
    const body = JSON.stringify({ hello: "world" });
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
  } else {
    res.writeHead(404);
    res.end();
  }
}

export interface Running {
  readonly name: string;
  readonly url: string;
  readonly server: Server;
}

async function listen(name: string, server: Server): Promise<Running> {
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { name, url: `http://127.0.0.1:${port}/hello`, server };
}

/** Starts one of the two servers on 127.0.0.1 with an ephemeral port. */
export function startServer(which: "adapter" | "bare"): Promise<Running> {
  return which === "adapter"
    ? listen("node adapter JSON", createServer(adapt(handler)))
    : listen("bare node:http", createServer(bare));
}
