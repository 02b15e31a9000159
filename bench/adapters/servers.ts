// The servers bench/adapters compares, each started alone in its own process (serve.ts):
// - the node adapter against bare node:http, on a trivial JSON handler (GET /hello);
// - the same router mounted in Express (rest-webhooks/express) against the routes written as native Express
//   routes, and mounted in Fastify (rest-webhooks/fastify, one catch-all route) against native Fastify routes,
//   on a parameter route (GET /users/u_42) among a dozen routes; plus, to measure the plugin's design choice,
//   the router's routes registered one by one as Fastify routes.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import Fastify from "fastify";
import { adapt as adaptExpress } from "../../src/express/index";
import { restWebhooks } from "../../src/fastify/index";
import { empty, type Handler, json } from "../../src/http/message";
import { nodeDispatcher } from "../../src/node/adapt";
import { adapt } from "../../src/node/index";
import { startBody } from "../../src/node/request";
import { createRouter, type Router } from "../../src/routing/index";

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

/** The routes of the framework cases, as templates; every one answers `{ route, ...params }`. */
const TEMPLATES = [
  "/hello",
  "/users",
  "/users/{user_id}",
  "/users/{user_id}/orders",
  "/users/{user_id}/orders/{order_id}",
  "/products",
  "/products/{product_id}",
  "/products/{product_id}/reviews",
  "/carts/{cart_id}",
  "/carts/{cart_id}/items/{item_id}",
  "/health",
  "/status",
] as const;

/** The path every framework case is loaded on: a parameter route in the middle of the table. */
export const FRAMEWORK_PATH = "/users/u_42";

function router(): Router {
  const r = createRouter();
  for (const template of TEMPLATES) {
    r.route("GET", template, { name: template }, ({ params }) => json(200, { route: template, ...params }));
  }
  return r;
}

/** Fastify and Express write parameters as `:name`. */
const colon = (template: string) => template.replace(/\{(\w+)\}/g, ":$1");

function nativeExpress() {
  // ETags off: the router computes none, so both sides do the same work.
  const app = express().set("etag", false).set("x-powered-by", false);
  for (const template of TEMPLATES) {
    app.get(colon(template), (req, res) => {
      res.json({ route: template, ...req.params });
    });
  }
  return app;
}

function nativeFastify() {
  const app = Fastify();
  for (const template of TEMPLATES) {
    app.get(colon(template), async (request) => ({ route: template, ...(request.params as object) }));
  }
  return app;
}

/** The other design the plugin could have had: each route registered as a Fastify route, the router behind it. */
function fastifyPerRoute() {
  const app = Fastify();
  const dispatch = nodeDispatcher(router().handler());
  for (const template of TEMPLATES) {
    app.get(colon(template), (request, reply) => {
      reply.hijack();
      dispatch(request.raw, reply.raw, startBody(request.raw, 1_048_576));
    });
  }
  return app;
}

export const SERVERS = {
  adapter: "node adapter JSON",
  bare: "bare node:http",
  "express-router": "router in Express",
  "express-native": "native Express routes",
  "fastify-router": "router in Fastify",
  "fastify-native": "native Fastify routes",
  "fastify-per-route": "router per Fastify route",
} as const;
export type ServerKind = keyof typeof SERVERS;

export interface Running {
  readonly name: string;
  readonly url: string;
  readonly close: () => Promise<unknown>;
}

async function listen(name: string, server: Server, path: string): Promise<Running> {
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { name, url: `http://127.0.0.1:${port}${path}`, close: () => new Promise((r) => server.close(r)) };
}

async function listenFastify(name: string, app: ReturnType<typeof Fastify>): Promise<Running> {
  const base = await app.listen({ port: 0, host: "127.0.0.1" });
  app.server.keepAliveTimeout = 30_000;
  return { name, url: `${base}${FRAMEWORK_PATH}`, close: () => app.close() };
}

/** The request listener (and the path it is measured on) of one server, without a socket: for in-process runs. */
export async function listenerOf(
  which: ServerKind,
): Promise<{ listener: (req: IncomingMessage, res: ServerResponse) => void; path: string }> {
  switch (which) {
    case "adapter":
      return { listener: adapt(handler), path: "/hello" };
    case "bare":
      return { listener: bare, path: "/hello" };
    case "express-router":
      return { listener: express().use(adaptExpress(router())), path: FRAMEWORK_PATH };
    case "express-native":
      return { listener: nativeExpress(), path: FRAMEWORK_PATH };
    default: {
      const app =
        which === "fastify-native" ? nativeFastify() : which === "fastify-per-route" ? fastifyPerRoute() : Fastify();
      if (which === "fastify-router") await app.register(restWebhooks, { handler: router() });
      await app.ready();
      // fastify.routing: the listener Fastify's own server runs.
      return { listener: (req, res) => app.routing(req, res), path: FRAMEWORK_PATH };
    }
  }
}

/** Starts one server on 127.0.0.1 with an ephemeral port. */
export async function startServer(which: ServerKind): Promise<Running> {
  const name = SERVERS[which];
  switch (which) {
    case "adapter":
      return listen(name, createServer(adapt(handler)), "/hello");
    case "bare":
      return listen(name, createServer(bare), "/hello");
    case "express-router":
      return listen(name, createServer(express().use(adaptExpress(router()))), FRAMEWORK_PATH);
    case "express-native":
      return listen(name, createServer(nativeExpress()), FRAMEWORK_PATH);
    case "fastify-router": {
      const app = Fastify();
      await app.register(restWebhooks, { handler: router() });
      return listenFastify(name, app);
    }
    case "fastify-native":
      return listenFastify(name, nativeFastify());
    case "fastify-per-route":
      return listenFastify(name, fastifyPerRoute());
  }
}
