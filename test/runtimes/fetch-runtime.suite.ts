/**
 * Runs inside Bun (`bun test`) and Deno (vitest under `deno run`), started by bun.test.ts and deno.test.ts: the
 * Fetch adapter's contract, and a signed webhook delivered over the runtime's own HTTP server. Not a `*.test.ts`
 * file, so Node's vitest does not collect it.
 */
import { describe, expect, it } from "vitest";
import { createFetchApp } from "../../examples/frameworks/fetch-app";
import { adapt } from "../../src/fetch";
import { Router } from "../../src/routing";
import { type AdapterHarness, adapterContract } from "../http/adapter-contract";
import { fetchSender } from "../support/fetch-client";
import { expectedPayload, webhookFixture } from "../support/signed-webhook";

type Serve = (request: Request) => Promise<Response>;
interface Running {
  url: string;
  stop(): Promise<void>;
}

const runtime = globalThis as {
  Bun?: {
    version: string;
    serve(options: { port: number; hostname: string; fetch: Serve }): { port: number; stop(force?: boolean): void };
  };
  Deno?: {
    version: { deno: string };
    serve(
      options: { port: number; hostname: string; onListen(address: { port: number }): void },
      handler: Serve,
    ): { shutdown(): Promise<void> };
  };
};

/** Serves `fetch` on the runtime's own server, on an ephemeral loopback port. */
async function listen(fetch: Serve): Promise<Running> {
  if (runtime.Bun !== undefined) {
    const server = runtime.Bun.serve({ port: 0, hostname: "127.0.0.1", fetch });
    return { url: `http://127.0.0.1:${server.port}`, stop: async () => server.stop(true) };
  }
  const deno = runtime.Deno;
  if (deno === undefined) throw new Error("this suite runs on Bun or Deno");
  let port = 0;
  const listening = new Promise<void>((resolve) => {
    const server = deno.serve(
      {
        port: 0,
        hostname: "127.0.0.1",
        onListen: (address) => {
          port = address.port;
          resolve();
        },
      },
      fetch,
    );
    stop = () => server.shutdown();
  });
  let stop: () => Promise<void> = async () => undefined;
  await listening;
  return { url: `http://127.0.0.1:${port}`, stop: () => stop() };
}

const name = runtime.Bun !== undefined ? "bun" : "deno";

describe(`on ${name}`, () => {
  it("really runs on Bun or Deno", () => {
    expect(runtime.Bun?.version ?? runtime.Deno?.version.deno).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("delivers a signed webhook end to end over the runtime's own HTTP server", async () => {
    const fixture = webhookFixture();
    const server = await listen(createFetchApp(fixture.options, { afterSend: (run) => setTimeout(run, 0) }));
    try {
      const { body, headers } = fixture.delivery(`msg_${name}`);
      const response = await fetch(`${server.url}/webhooks`, { method: "POST", body, headers });
      expect(response.status).toBe(202);
      const tampered = await fetch(`${server.url}/webhooks`, { method: "POST", body: `${body} `, headers });
      expect(tampered.status).toBe(400);
      await tampered.arrayBuffer();
      expect(await fixture.drain()).toStrictEqual([expectedPayload(`msg_${name}`)]);
      const items = await fetch(`${server.url}/api/items`);
      expect(await items.json()).toStrictEqual([]);
    } finally {
      await server.stop();
    }
  });
});

adapterContract(`fetch on ${name}`, async (app, options): Promise<AdapterHarness> => {
  const serve = adapt(app instanceof Router ? app.handler() : app, options);
  return { send: fetchSender(serve), close: async () => undefined };
});
