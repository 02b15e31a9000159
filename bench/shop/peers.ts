// The contenders: the same three routes (GET an order, with 304; POST an order) on bare node:http, Fastify and
// Express, each doing the work listed in common.ts: token check, user lookup, zod validation, total, store,
// list change, queued order.created event, and the shop's headers.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import Fastify from "fastify";
import {
  notModified,
  notModifiedHeaders,
  orderHeaders,
  orderJson,
  orderStore,
  parseCreate,
  tokenVerifier,
} from "./common";

/** A contender listening on 127.0.0.1. */
export interface Contender {
  name: string;
  url: string;
  /** How many `order.created` events it has queued so far (checked before timing). */
  events(): number;
  close(): Promise<void>;
}

const PROBLEM = { "content-type": "application/problem+json" };
const problem = (status: number, code: string) => JSON.stringify({ type: "about:blank", status, code });

function listening(
  name: string,
  server: ReturnType<typeof createServer>,
  store: ReturnType<typeof orderStore>,
): Promise<Contender> {
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        name,
        url: `http://127.0.0.1:${port}`,
        events: () => store.drained() + store.outbox.length,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

/** The routes on bare node:http. */
export function bare(secret: string): Promise<Contender> {
  const verify = tokenVerifier(secret);
  const store = orderStore();
  const ORDER = /^\/users\/([^/]+)\/orders(?:\/([^/]+))?$/;
  const send = (res: ServerResponse, status: number, headers: Record<string, string>, body?: string) => {
    res.writeHead(status, headers).end(body);
  };
  async function handle(req: IncomingMessage, res: ServerResponse, body: string) {
    const match = ORDER.exec(req.url ?? "");
    if (match === null) return send(res, 404, PROBLEM, problem(404, "not_found"));
    const principal = await verify(req.headers.authorization);
    if (principal === undefined) {
      return send(res, 401, { ...PROBLEM, "www-authenticate": 'Bearer realm="shop"' }, problem(401, "unauthorized"));
    }
    const userId = decodeURIComponent(match[1] as string);
    if (!principal.admin && principal.sub !== userId) return send(res, 403, PROBLEM, problem(403, "forbidden"));
    if (match[2] !== undefined && req.method === "GET") {
      const order = store.get(userId, decodeURIComponent(match[2]));
      if (order === undefined) return send(res, 404, PROBLEM, problem(404, "order_not_found"));
      const headers = orderHeaders(order);
      if (notModified(req.headers, headers)) return send(res, 304, notModifiedHeaders(headers));
      return send(res, 200, { ...headers, "content-type": "application/json" }, JSON.stringify(orderJson(order)));
    }
    if (match[2] === undefined && req.method === "POST") {
      let value: unknown;
      try {
        value = JSON.parse(body);
      } catch {
        return send(res, 400, PROBLEM, problem(400, "malformed_json"));
      }
      const parsed = parseCreate(value);
      if (!parsed.success) return send(res, 422, PROBLEM, problem(422, "validation_failed"));
      const created = store.create(userId, parsed.data.items);
      if (!created.ok) return send(res, 404, PROBLEM, problem(404, "user_not_found"));
      const { order } = created;
      const location = `/users/${encodeURIComponent(userId)}/orders/${order.id}`;
      return send(
        res,
        201,
        {
          ...orderHeaders(order, order.updatedAt),
          "content-type": "application/json",
          location,
          "content-location": location,
        },
        JSON.stringify(orderJson(order)),
      );
    }
    return send(res, 405, PROBLEM, problem(405, "method_not_allowed"));
  }
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      handle(req, res, body).catch(() => send(res, 500, PROBLEM, problem(500, "internal_error")));
    });
  });
  return listening("bare node:http", server, store);
}

/** The routes on Fastify. */
export async function fastify(secret: string): Promise<Contender> {
  const verify = tokenVerifier(secret);
  const store = orderStore();
  const app = Fastify({ logger: false });
  app.addHook("preHandler", async (request, reply) => {
    const principal = await verify(request.headers.authorization);
    if (principal === undefined) {
      return reply
        .code(401)
        .headers({ ...PROBLEM, "www-authenticate": 'Bearer realm="shop"' })
        .send(problem(401, "unauthorized"));
    }
    const { user_id } = request.params as { user_id: string };
    if (!principal.admin && principal.sub !== user_id)
      return reply.code(403).headers(PROBLEM).send(problem(403, "forbidden"));
  });
  app.get("/users/:user_id/orders/:order_id", async (request, reply) => {
    const { user_id, order_id } = request.params as { user_id: string; order_id: string };
    const order = store.get(user_id, order_id);
    if (order === undefined) return reply.code(404).headers(PROBLEM).send(problem(404, "order_not_found"));
    const headers = orderHeaders(order);
    if (notModified(request.headers, headers)) {
      return reply.code(304).headers(notModifiedHeaders(headers)).send();
    }
    return reply.headers(headers).send(orderJson(order));
  });
  app.post("/users/:user_id/orders", async (request, reply) => {
    const { user_id } = request.params as { user_id: string };
    const parsed = parseCreate(request.body);
    if (!parsed.success) return reply.code(422).headers(PROBLEM).send(problem(422, "validation_failed"));
    const created = store.create(user_id, parsed.data.items);
    if (!created.ok) return reply.code(404).headers(PROBLEM).send(problem(404, "user_not_found"));
    const { order } = created;
    const location = `/users/${encodeURIComponent(user_id)}/orders/${order.id}`;
    return reply
      .code(201)
      .headers({ ...orderHeaders(order, order.updatedAt), location, "content-location": location })
      .send(orderJson(order));
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = app.server.address() as AddressInfo;
  return {
    name: "fastify",
    url: `http://127.0.0.1:${port}`,
    events: () => store.drained() + store.outbox.length,
    close: () => app.close(),
  };
}

/** The routes on Express. */
export function expressApp(secret: string): Promise<Contender> {
  const verify = tokenVerifier(secret);
  const store = orderStore();
  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");
  const authorize: express.RequestHandler = (req, res, next) => {
    verify(req.headers.authorization).then((principal) => {
      if (principal === undefined) {
        res
          .status(401)
          .set({ ...PROBLEM, "www-authenticate": 'Bearer realm="shop"' })
          .send(problem(401, "unauthorized"));
      } else if (!principal.admin && principal.sub !== req.params.user_id) {
        res.status(403).set(PROBLEM).send(problem(403, "forbidden"));
      } else next();
    }, next);
  };
  app.get("/users/:user_id/orders/:order_id", authorize, (req, res) => {
    const order = store.get(req.params.user_id as string, req.params.order_id as string);
    if (order === undefined) {
      res.status(404).set(PROBLEM).send(problem(404, "order_not_found"));
      return;
    }
    const headers = orderHeaders(order);
    if (notModified(req.headers, headers)) {
      res.status(304).set(notModifiedHeaders(headers)).end();
      return;
    }
    res.set(headers).json(orderJson(order));
  });
  app.post("/users/:user_id/orders", authorize, express.json(), (req, res) => {
    const parsed = parseCreate(req.body);
    if (!parsed.success) {
      res.status(422).set(PROBLEM).send(problem(422, "validation_failed"));
      return;
    }
    const userId = req.params.user_id as string;
    const created = store.create(userId, parsed.data.items);
    if (!created.ok) {
      res.status(404).set(PROBLEM).send(problem(404, "user_not_found"));
      return;
    }
    const { order } = created;
    const location = `/users/${encodeURIComponent(userId)}/orders/${order.id}`;
    res
      .status(201)
      .set({ ...orderHeaders(order, order.updatedAt), location, "content-location": location })
      .json(orderJson(order));
  });
  return listening("express", createServer(app), store);
}
