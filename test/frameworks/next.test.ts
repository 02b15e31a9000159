/**
 * Next.js App Router route handlers: a route module exports one function per method, `(request, { params })`;
 * Next calls the one named after the request's method, and answers 405 itself when there is none.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import * as apiRoute from "../../examples/frameworks/next/app/api/[...path]/route";
import { inbox } from "../../examples/frameworks/next/app/state";
import * as webhooksRoute from "../../examples/frameworks/next/app/webhooks/route";
import { type AdapterOptions, adapt } from "../../src/fetch";
import type { Handler } from "../../src/http";
import { Router } from "../../src/routing";
import { createWebhookProcessor } from "../../src/webhooks/consumer";
import { sign } from "../../src/webhooks/signing";
import { type AdapterHarness, adapterContract } from "../http/adapter-contract";
import { fetchSender } from "../support/fetch-client";

type RouteHandler = (
  request: Request,
  context: { params: Promise<Record<string, string | string[]>> },
) => Promise<Response> | Response;
type RouteModule = Partial<Record<string, RouteHandler>>;

/**
 * What Next.js does with a route module for one request: a method the module does not export gets a bare 405,
 * without Allow (Next.js's `handleMethodNotAllowedResponse`, `new Response(null, { status: 405 })`).
 */
function nextServe(module: RouteModule): (request: Request) => Promise<Response> {
  return async (request) => {
    const handler = module[request.method];
    if (handler === undefined) return new Response(null, { status: 405 });
    const segments = new URL(request.url).pathname.split("/").filter(Boolean);
    return handler(request, { params: Promise.resolve({ path: segments }) });
  };
}

/** A route module as docs/adapters.md shows it: the adapted handler exported under each method's name. */
function routeModule(handler: Handler, options: AdapterOptions): RouteModule {
  const handle = adapt(handler, options);
  return Object.fromEntries(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"].map((m) => [m, handle]));
}

adapterContract("next.js route handlers", async (app, options): Promise<AdapterHarness> => {
  const serve = nextServe(routeModule(app instanceof Router ? app.handler() : app, options));
  return { send: fetchSender(serve), close: async () => undefined };
});

describe("the Next.js example", () => {
  const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  beforeAll(() => {
    vi.stubEnv("WEBHOOK_SECRET", secret); // read once, when the first route handler runs
  });
  afterAll(() => {
    vi.unstubAllEnvs();
  });

  it("serves the API from app/api/[...path]/route.ts", async () => {
    const serve = nextServe(apiRoute as RouteModule);
    const created = await serve(
      new Request("http://localhost/api/items", {
        method: "POST",
        body: JSON.stringify({ name: "kettle" }),
        headers: { "content-type": "application/json" },
      }),
    );
    expect(created.status).toBe(201);
    const list = await serve(new Request("http://localhost/api/items"));
    expect(await list.json()).toStrictEqual([{ id: "1", name: "kettle" }]);
  });

  it("delivers a signed webhook end to end through app/webhooks/route.ts", async () => {
    const serve = nextServe(webhooksRoute as unknown as RouteModule);
    const body = '{"type":"order.shipped","data":{"order":"msg_next"}}';
    const headers = sign({ id: "msg_next", timestamp: Math.floor(Date.now() / 1000), body, secrets: secret });
    const response = await serve(new Request("http://localhost/webhooks", { method: "POST", body, headers }));
    expect(response.status).toBe(202);
    const handled: unknown[] = [];
    await createWebhookProcessor({ inbox })
      .on("order.*", ({ event }) => {
        handled.push(event.payload);
      })
      .processDue();
    expect(handled).toStrictEqual([{ type: "order.shipped", data: { order: "msg_next" } }]);
  });

  it("regression: answers another method on /webhooks 405 with Allow: POST as a problem (RFC 9110 §15.5.6), not Next's bare 405", async () => {
    const serve = nextServe(webhooksRoute as unknown as RouteModule);
    for (const method of ["GET", "PUT"]) {
      const response = await serve(new Request("http://localhost/webhooks", { method }));
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toContain("POST");
      expect(response.headers.get("content-type")).toBe("application/problem+json");
    }
  });
});
