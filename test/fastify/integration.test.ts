import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, describe, expect, it, vi } from "vitest";
import { restWebhooks, webhookConsumer } from "../../src/fastify";
import { json } from "../../src/http";
import { createRouter } from "../../src/routing";
import { expectedPayload, webhookFixture } from "../support/signed-webhook";

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

async function listen(app: FastifyInstance): Promise<string> {
  apps.push(app);
  return app.listen({ port: 0, host: "127.0.0.1" });
}

const router = () =>
  createRouter()
    .route("GET", "/api/items", { name: "items.list" }, ({ request }) => json(200, { path: request.path }))
    .route("POST", "/api/items", { name: "items.create" }, ({ request }) =>
      json(201, { text: new TextDecoder().decode(request.body) }),
    );

describe("rest-webhooks/fastify", () => {
  describe("restWebhooks", () => {
    it("leaves a path the router has no route for to Fastify's not-found handler", async () => {
      const app = Fastify();
      await app.register(restWebhooks, { handler: router() });
      const notFound = vi.fn();
      app.setNotFoundHandler((request, reply) => {
        notFound(request.url);
        return reply.code(404).send({ native404: true });
      });
      const base = await listen(app);
      const missing = await fetch(`${base}/missing?x=1`);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toStrictEqual({ native404: true });
      expect(notFound).toHaveBeenCalledWith("/missing?x=1");
    });

    it("leaves Fastify's own routes, and their JSON parser, to Fastify", async () => {
      const app = Fastify();
      await app.register(restWebhooks, { handler: router() });
      app.post("/native", async (request) => ({ parsed: request.body }));
      const base = await listen(app);
      const native = await fetch(`${base}/native`, {
        method: "POST",
        body: '{"a":1}',
        headers: { "content-type": "application/json" },
      });
      expect(await native.json()).toStrictEqual({ parsed: { a: 1 } });
      // Our routes get the bytes as sent, whatever the content type.
      const ours = await fetch(`${base}/api/items`, {
        method: "POST",
        body: '{ "a" : 1 }',
        headers: { "content-type": "application/json" },
      });
      expect(await ours.json()).toStrictEqual({ text: '{ "a" : 1 }' });
    });

    it("under a prefix, answers only there and sees the full path", async () => {
      const app = Fastify();
      await app.register(restWebhooks, { handler: router(), prefix: "/api" });
      app.get("/items", async () => ({ outside: true }));
      const base = await listen(app);
      expect(await (await fetch(`${base}/api/items`)).json()).toStrictEqual({ path: "/api/items" });
      expect(await (await fetch(`${base}/items`)).json()).toStrictEqual({ outside: true });
    });
  });

  describe("webhookConsumer", () => {
    it("delivers a signed webhook end to end, the body raw through the plugin's content-type parser", async () => {
      const fixture = webhookFixture();
      const app = Fastify();
      await app.register(webhookConsumer, { url: "/webhooks", ...fixture.options });
      const base = await listen(app);
      const { body, headers } = fixture.delivery("msg_fastify");
      const response = await fetch(`${base}/webhooks`, { method: "POST", body, headers });
      expect(response.status).toBe(202);
      expect(await fixture.drain()).toStrictEqual([expectedPayload("msg_fastify")]);
    });

    it("answers a tampered delivery 400 and another method 405 with Allow: POST", async () => {
      const fixture = webhookFixture();
      const app = Fastify();
      await app.register(webhookConsumer, { url: "/webhooks", ...fixture.options });
      const base = await listen(app);
      const { body, headers } = fixture.delivery("msg_bad");
      const tampered = await fetch(`${base}/webhooks`, { method: "POST", body: `${body} `, headers });
      expect(tampered.status).toBe(400);
      const get = await fetch(`${base}/webhooks`);
      expect(get.status).toBe(405);
      expect(get.headers.get("allow")).toBe("POST");
      expect(await fixture.inbox.get("msg_bad")).toBeUndefined();
    });
  });
});
