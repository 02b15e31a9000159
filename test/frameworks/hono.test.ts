import { Hono } from "hono";
import { describe, expect, it, vi } from "vitest";
import { createHonoApp } from "../../examples/frameworks/hono";
import { adapt } from "../../src/fetch";
import { bodyConsumed } from "../../src/http/adapter-options";
import { json } from "../../src/http/message";
import { Router } from "../../src/routing";
import { type AdapterHarness, adapterContract } from "../http/adapter-contract";
import { fetchSender } from "../support/fetch-client";
import { expectedPayload, webhookFixture } from "../support/signed-webhook";

/** The Fetch adapter behind a Hono catch-all route, driven through Hono's own `app.request()`. */
adapterContract("hono", async (app, options): Promise<AdapterHarness> => {
  const serve = adapt(app instanceof Router ? app.handler() : app, options);
  const hono = new Hono().all("*", (c) => serve(c.req.raw));
  return { send: fetchSender((request) => hono.request(request)), close: async () => undefined };
});

describe("the Fetch adapter behind Hono: a body read before it (docs/adapters.md, Hono)", () => {
  it("regression: after c.req.json() in a middleware, answers 500 body_consumed and reports the cause to onError", async () => {
    const onError = vi.fn();
    const handler = vi.fn(() => json(200, {}));
    const serve = adapt(handler, { onError });
    const hono = new Hono()
      .use(async (c, next) => {
        await c.req.json();
        await next();
      })
      .all("*", (c) => serve(c.req.raw));
    const response = await hono.request("/hook", {
      method: "POST",
      body: '{"a":1}',
      headers: { "content-type": "application/json" },
    });
    expect(response.status).toBe(500);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    // The document the node, Express and Fastify adapters send for the same mistake (one factory).
    expect(await response.json()).toStrictEqual(bodyConsumed(new TypeError()).toJSON());
    expect(handler).not.toHaveBeenCalled();
    expect(onError).toHaveBeenCalledWith(expect.any(TypeError), undefined);
  });
});

describe("the Hono example", () => {
  it("serves the API and Hono's own routes", async () => {
    const app = createHonoApp(webhookFixture().options);
    expect(await (await app.request("/health")).json()).toStrictEqual({ ok: true });
    const created = await app.request("/api/items", {
      method: "POST",
      body: JSON.stringify({ name: "kettle" }),
      headers: { "content-type": "application/json" },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toBe("/api/items/1");
    expect(await (await app.request("/api/items/1")).json()).toStrictEqual({ id: "1", name: "kettle" });
  });

  it("regression: answers another method on /webhooks 405 with Allow (RFC 9110 §15.5.6), not Hono's 404", async () => {
    const app = createHonoApp(webhookFixture().options);
    for (const method of ["GET", "PUT"]) {
      const response = await app.request("/webhooks", { method });
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toContain("POST");
    }
  });

  it("delivers a signed webhook end to end", async () => {
    const fixture = webhookFixture();
    const app = createHonoApp(fixture.options);
    const { body, headers } = fixture.delivery("msg_hono");
    const response = await app.request("/webhooks", { method: "POST", body, headers });
    expect(response.status).toBe(202);
    expect(await fixture.drain()).toStrictEqual([expectedPayload("msg_hono")]);
  });
});
