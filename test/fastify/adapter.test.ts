import { Agent } from "node:http";
import type { AddressInfo } from "node:net";
import Fastify from "fastify";
import { restWebhooks } from "../../src/fastify";
import { type AdapterHarness, adapterContract } from "../http/adapter-contract";
import { send } from "../support/node-client";

/** The plugin registered in a real Fastify 5 app, listening on 127.0.0.1. */
adapterContract("fastify", async (handler, options): Promise<AdapterHarness> => {
  const app = Fastify();
  await app.register(restWebhooks, { handler, ...options });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = app.server.address() as AddressInfo;
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  return {
    // Express and Fastify matched their own middleware on the path as sent (src/node/mounted-target.ts).
    refusesDotSegments: true,
    send: (spec) => send(port, agent, spec),
    close: async () => {
      agent.destroy();
      app.server.closeAllConnections();
      await app.close();
    },
  };
});
