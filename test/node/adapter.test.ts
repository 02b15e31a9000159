import { Agent } from "node:http";
import type { AddressInfo } from "node:net";
import { createServer } from "../../src/node";
import { Router } from "../../src/routing";
import { type AdapterHarness, adapterContract } from "../http/adapter-contract";
import { send } from "../support/node-client";

adapterContract("node", async (app, options): Promise<AdapterHarness> => {
  const server = createServer(app instanceof Router ? app.handler() : app, options);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  return {
    send: (spec) => send(port, agent, spec),
    close: async () => {
      agent.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
});
