import { Agent, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { adapt } from "../../src/express";
import { type AdapterHarness, adapterContract } from "../http/adapter-contract";
import { send } from "../support/node-client";

/** The middleware mounted in a real Express 5 app, behind Express's own final 404. */
adapterContract("express", async (app, options): Promise<AdapterHarness> => {
  const server = createServer(express().use(adapt(app, options)));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  return {
    // Express and Fastify matched their own middleware on the path as sent (src/node/mounted-target.ts).
    refusesDotSegments: true,
    send: (spec) => send(port, agent, spec),
    close: async () => {
      agent.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
});
