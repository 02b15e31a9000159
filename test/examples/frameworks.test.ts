/** The Express and Fastify examples (examples/frameworks) over real HTTP: their API, their own routes, a signed webhook. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { createExpressApp } from "../../examples/frameworks/express";
import { createFastifyApp } from "../../examples/frameworks/fastify";
import { expectedPayload, webhookFixture } from "../support/signed-webhook";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function listenExpress(app: ReturnType<typeof createExpressApp>): Promise<string> {
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function listenFastify(app: FastifyInstance): Promise<string> {
  closers.push(() => app.close());
  return app.listen({ port: 0, host: "127.0.0.1" });
}

const starts = {
  express: async (fixture: ReturnType<typeof webhookFixture>) => listenExpress(createExpressApp(fixture.options)),
  fastify: async (fixture: ReturnType<typeof webhookFixture>) => listenFastify(await createFastifyApp(fixture.options)),
};

describe.each(Object.entries(starts))("the %s example", (name, start) => {
  it("serves the API, the framework's own routes, and a 404 for the rest", async () => {
    const base = await start(webhookFixture());
    const created = await fetch(`${base}/api/items`, {
      method: "POST",
      body: JSON.stringify({ name: "kettle" }),
      headers: { "content-type": "application/json" },
    });
    expect(created.status).toBe(201);
    // Mounted at the root with the full paths declared, so the Location the router builds is the client's.
    expect(created.headers.get("location")).toBe("/api/items/1");
    expect(await (await fetch(`${base}/api/items/1`)).json()).toStrictEqual({ id: "1", name: "kettle" });
    expect((await fetch(`${base}/api/items/2`)).status).toBe(404);
    expect((await fetch(`${base}/api/items`, { method: "DELETE" })).headers.get("allow")).toContain("POST");
    expect(await (await fetch(`${base}/health`)).json()).toStrictEqual({ ok: true });
    expect((await fetch(`${base}/elsewhere`)).status).toBe(404);
  });

  it("regression: answers another method on /webhooks 405 with Allow: POST (RFC 9110 §15.5.6), not 404", async () => {
    const base = await start(webhookFixture());
    for (const method of ["GET", "PUT"]) {
      const response = await fetch(`${base}/webhooks`, { method });
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toContain("POST");
    }
  });

  it("delivers a signed webhook end to end", async () => {
    const fixture = webhookFixture();
    const base = await start(fixture);
    const { body, headers } = fixture.delivery(`msg_${name}`);
    const response = await fetch(`${base}/webhooks`, { method: "POST", body, headers });
    expect(response.status).toBe(202);
    expect(await fixture.drain()).toStrictEqual([expectedPayload(`msg_${name}`)]);
  });
});
