import { adapt } from "../../src/fetch";
import { Router } from "../../src/routing";
import { type AdapterHarness, adapterContract } from "../http/adapter-contract";
import { fetchSender } from "../support/fetch-client";

adapterContract("fetch", async (app, options): Promise<AdapterHarness> => {
  const serve = adapt(app instanceof Router ? app.handler() : app, options);
  return { send: fetchSender(serve), close: async () => undefined };
});
