import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { PassThrough, Readable } from "node:stream";
import { gzipSync } from "node:zlib";
import Fastify, { type FastifyInstance, type FastifyRequest } from "fastify";
import { afterEach, describe, expect, it, vi } from "vitest";
import { restWebhooks, webhookConsumer } from "../../src/fastify";
import { HttpProblem, type HttpRequest, json } from "../../src/http";
import { bodyConsumed } from "../../src/http/adapter-options";
import { sendResponse } from "../../src/node";
import { createRouter } from "../../src/routing";
import { sign } from "../../src/webhooks/signing";
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

    describe("regression: takes every method node's parser accepts, not only Fastify's nine", () => {
      const cache = () =>
        createRouter()
          .route("PURGE", "/cache", { name: "cache.purge" }, () => json(200, { purged: true }))
          .route("GET", "/items", { name: "items.list" }, () => json(200, []));

      it("a router's PURGE route answers, as on node", async () => {
        const app = Fastify();
        await app.register(restWebhooks, { handler: cache() });
        const response = await fetch(`${await listen(app)}/cache`, { method: "PURGE" });
        expect(response.status).toBe(200);
        expect(await response.json()).toStrictEqual({ purged: true });
      });

      it("PROPFIND at a path the router knows gets its 405 with Allow; at one it does not, Fastify's 404", async () => {
        const app = Fastify();
        await app.register(restWebhooks, { handler: cache() });
        const base = await listen(app);
        const known = await fetch(`${base}/items`, { method: "PROPFIND" });
        expect(known.status).toBe(405);
        expect(known.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
        expect(await known.json()).toMatchObject({ code: "method_not_allowed" });
        const unknown = await fetch(`${base}/elsewhere`, { method: "PROPFIND" });
        expect(unknown.status).toBe(404);
        expect(await unknown.json()).toMatchObject({ message: "Route PROPFIND:/elsewhere not found" });
      });

      it("leaves the methods Fastify already has as they are, without a warning, beside a second plugin", async () => {
        const warn = vi.spyOn(process, "emitWarning");
        const app = Fastify();
        app.addHttpMethod("PROPFIND");
        const ok = () => json(200, { ok: true });
        await app.register(restWebhooks, { handler: ok, prefix: "/a" });
        await app.register(restWebhooks, { handler: ok, prefix: "/b" });
        // Added by the plugin: the app's own routes may use it, with a body.
        app.route({ method: "MKCOL", url: "/own", handler: async (request) => ({ own: request.body }) });
        const base = await listen(app);
        expect((await fetch(`${base}/b/x`, { method: "PROPFIND" })).status).toBe(200);
        const own = await fetch(`${base}/own`, {
          method: "MKCOL",
          body: '{"a":1}',
          headers: { "content-type": "application/json" },
        });
        expect(await own.json()).toStrictEqual({ own: { a: 1 } });
        expect(warn).not.toHaveBeenCalled();
        warn.mockRestore();
      });
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

  describe("restWebhooks with Fastify's hooks and routes", () => {
    const echo = () => (request: HttpRequest) =>
      json(200, {
        path: request.path,
        contentType: request.headers["content-type"] ?? null,
        bytes: request.body.length,
      });

    it("regression: sends the header fields onRequest and preHandler hooks set on the reply; the handler's own win", async () => {
      const app = Fastify();
      // What @fastify/cors and @fastify/helmet do.
      app.addHook("onRequest", async (_request, reply) => {
        reply.header("access-control-allow-origin", "*");
        reply.header("x-request-id", "from-hook");
      });
      app.addHook("preHandler", async (_request, reply) => {
        reply.header("x-frame-options", "DENY");
      });
      await app.register(restWebhooks, {
        handler: (request) =>
          request.path === "/mine"
            ? { status: 200, headers: { "X-Request-Id": "from-handler" }, body: "ok" }
            : json(200, {}),
      });
      const base = await listen(app);
      const theirs = await fetch(`${base}/theirs`);
      expect(theirs.headers.get("access-control-allow-origin")).toBe("*");
      expect(theirs.headers.get("x-request-id")).toBe("from-hook");
      expect(theirs.headers.get("x-frame-options")).toBe("DENY");
      const mine = await fetch(`${base}/mine`);
      expect(mine.headers.get("x-request-id")).toBe("from-handler");
      expect(mine.headers.get("access-control-allow-origin")).toBe("*");
    });

    it("runs onResponse hooks after the handler's response, with its status (docs/adapters.md, Hooks)", async () => {
      const app = Fastify();
      let seen: (status: number) => void = () => {};
      const status = new Promise<number>((resolve) => {
        seen = resolve;
      });
      app.addHook("onResponse", async (_request, reply) => {
        seen(reply.statusCode);
      });
      await app.register(restWebhooks, { handler: router() });
      const response = await fetch(`${await listen(app)}/api/items`, { method: "POST", body: "x" });
      expect(response.status).toBe(201);
      expect(await status).toBe(201);
    });

    it("regression: registers beside an OPTIONS * route (@fastify/cors's preflight), which then answers OPTIONS", async () => {
      const app = Fastify();
      app.options("*", async (_request, reply) => reply.code(204).header("access-control-allow-methods", "GET").send());
      await app.register(restWebhooks, { handler: router() });
      const base = await listen(app);
      const preflight = await fetch(`${base}/api/items`, { method: "OPTIONS" });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get("access-control-allow-methods")).toBe("GET");
      expect(await (await fetch(`${base}/api/items`)).json()).toStrictEqual({ path: "/api/items" });
    });

    it.each([
      ["json", "json"],
      ["an empty value", ""],
      ["a parameter without a type", "; charset=utf-8"],
    ])("regression: hands a body with %s as Content-Type to the handler, with the field as sent", async (_, type) => {
      const app = Fastify();
      await app.register(restWebhooks, { handler: echo() });
      await app.ready();
      apps.push(app);
      const response = await app.inject({
        method: "POST",
        url: "/hook",
        headers: { "content-type": type },
        payload: "{}",
      });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toStrictEqual({ path: "/hook", contentType: type, bytes: 2 });
    });

    it.each([
      ["no Content-Type", undefined],
      ["json as Content-Type", "json"],
      ["an empty Content-Type", ""],
      ["text/plain as Content-Type", "text/plain"],
    ])(
      "regression: hands a QUERY with %s to the handler, with the field as sent (not Fastify's 400 or 415)",
      async (_, type) => {
        const app = Fastify();
        await app.register(restWebhooks, { handler: echo() });
        // Bytes, not a string: fetch would add a Content-Type of its own. (Fastify's inject has no QUERY type.)
        const response = await fetch(`${await listen(app)}/search`, {
          method: "QUERY",
          headers: type === undefined ? {} : { "content-type": type },
          body: new TextEncoder().encode("{}"),
        });
        expect(response.status).toBe(200);
        expect(await response.json()).toStrictEqual({ path: "/search", contentType: type ?? null, bytes: 2 });
      },
    );

    it("leaves an undecodable path (/x%ZZ) to Fastify's own 400; frameworkErrors, as docs/adapters.md shows, makes it a problem", async () => {
      const plain = Fastify();
      await plain.register(restWebhooks, { handler: router() });
      expect((await fetch(`${await listen(plain)}/api/x%ZZ`)).status).toBe(400);
      const app = Fastify({
        frameworkErrors: (error, _request, reply) => {
          const problem = new HttpProblem({ status: error.statusCode ?? 400, code: error.code, detail: error.message });
          reply.hijack();
          sendResponse(reply.raw, problem.toResponse());
        },
      });
      await app.register(restWebhooks, { handler: router() });
      const response = await fetch(`${await listen(app)}/api/x%ZZ`);
      expect(response.status).toBe(400);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      expect(await response.json()).toMatchObject({ status: 400, code: "FST_ERR_BAD_URL" });
    });

    it("regression: under a prefix, reaches a router route at the prefix itself", async () => {
      const app = Fastify();
      const bare = createRouter()
        .route("GET", "/api", { name: "root" }, ({ request }) => json(200, { path: request.path }))
        .route("GET", "/api/items", { name: "items" }, ({ request }) => json(200, { path: request.path }));
      await app.register(restWebhooks, { handler: bare, prefix: "/api" });
      const base = await listen(app);
      expect(await (await fetch(`${base}/api`)).json()).toStrictEqual({ path: "/api" });
      expect(await (await fetch(`${base}/api/items`)).json()).toStrictEqual({ path: "/api/items" });
    });
  });

  describe("regression: a path with dot-segments or a \\ is refused 400, never resolved past a guard on the path as sent", () => {
    // fetch() resolves dot-segments itself: the target goes out as written only through node:http.
    const get = (base: string, path: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest({ host: "127.0.0.1", port: new URL(base).port, path }, (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            body += chunk;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on("error", reject);
        req.end();
      });
    const admin = () =>
      createRouter().route("GET", "/admin/users", { name: "admin" }, () => json(200, { secret: true }));
    const paths = ["/public/../admin/users", "/public/%2E%2e/admin/users", "/./admin/users", "/public/..\\admin/users"];

    it.each(paths)("%s, behind an onRequest guard on the URL: 400 bad_request_target", async (path) => {
      const app = Fastify();
      app.addHook("onRequest", async (request, reply) => {
        if (request.url.startsWith("/admin")) return reply.code(403).send("forbidden");
      });
      await app.register(restWebhooks, { handler: admin() });
      const base = await listen(app);
      expect((await get(base, "/admin/users")).status).toBe(403);
      const response = await get(base, path);
      expect(response.status).toBe(400);
      expect(JSON.parse(response.body)).toMatchObject({ code: "bad_request_target" });
    });

    it.each(paths.filter((path) => path.startsWith("/public/")))(
      "%s, through the /public plugin past the guarded /admin one: 400 bad_request_target",
      async (path) => {
        const app = Fastify();
        await app.register(
          async (scope) => {
            scope.addHook("onRequest", async (_request, reply) => reply.code(403).send("forbidden"));
            await scope.register(restWebhooks, { handler: admin() });
          },
          { prefix: "/admin" },
        );
        await app.register(restWebhooks, { handler: admin(), prefix: "/public" });
        const response = await get(await listen(app), path);
        expect(response.status).toBe(400);
        expect(JSON.parse(response.body)).toMatchObject({ code: "bad_request_target" });
      },
    );

    it("dots in the query or inside a segment are data", async () => {
      const app = Fastify();
      const files = createRouter().route("GET", "/files/a..b", { name: "f" }, ({ request }) =>
        json(200, request.query),
      );
      await app.register(restWebhooks, { handler: files });
      const response = await get(await listen(app), "/files/a..b?next=/../x");
      expect(response.status).toBe(200);
      expect(JSON.parse(response.body)).toStrictEqual({ next: "/../x" });
    });
  });

  describe("regression: a body a hook read from request.raw is answered 500 body_consumed, not left hanging", () => {
    const drain = async (request: FastifyRequest) => {
      for await (const _ of request.raw);
    };
    it.each([
      ["onRequest", (app: FastifyInstance) => app.addHook("onRequest", drain)],
      ["preParsing", (app: FastifyInstance) => app.addHook("preParsing", drain)],
      ["preHandler", (app: FastifyInstance) => app.addHook("preHandler", drain)],
      [
        "preParsing, returning a stream of its own (the plugin reads request.raw, not the payload)",
        (app: FastifyInstance) =>
          app.addHook("preParsing", async (request) => {
            const chunks: Buffer[] = [];
            for await (const chunk of request.raw) chunks.push(chunk as Buffer);
            return Readable.from([Buffer.concat(chunks)]);
          }),
      ],
    ])("%s", async (_, hook) => {
      const onError = vi.fn();
      const handler = vi.fn(() => json(200, {}));
      const app = Fastify();
      await app.register(async (scope) => {
        hook(scope);
        await scope.register(restWebhooks, { handler, onError });
      });
      const response = await fetch(`${await listen(app)}/hook`, {
        method: "POST",
        body: '{"a":1}',
        headers: { "content-type": "application/json" },
        signal: AbortSignal.timeout(1_000),
      });
      expect(response.status).toBe(500);
      // The document the node, Express and Fetch adapters send for the same mistake (one factory).
      expect(await response.json()).toStrictEqual(bodyConsumed(new TypeError()).toJSON());
      expect(handler).not.toHaveBeenCalled();
      expect(onError).toHaveBeenCalledTimes(1);
      const [error, request] = onError.mock.calls[0] as [unknown, { path: string }];
      expect(error).toBeInstanceOf(TypeError);
      expect(request.path).toBe("/hook");
    });
  });

  describe("regression: a preParsing hook that pipes request.raw into a stream of its own (200 KB) gets 500 body_consumed at once", () => {
    // The status line of the answer to a POST whose body is sent `delayMs` after its headers, or "" after 2 s.
    const postLate = (port: number, delayMs: number, body: Buffer) =>
      new Promise<string>((resolve) => {
        const socket = connect(port, "127.0.0.1");
        let answer = "";
        socket.on("data", (chunk: Buffer) => {
          answer += chunk.toString("latin1");
        });
        socket.on("error", () => undefined);
        socket.write(
          `POST /hook HTTP/1.1\r\nHost: a\r\nConnection: close\r\nContent-Type: text/plain\r\n` +
            `Content-Length: ${body.length}\r\n\r\n`,
        );
        const late = setTimeout(() => socket.write(body), delayMs);
        const timeout = setTimeout(() => socket.destroy(), 2_000);
        socket.on("close", () => {
          clearTimeout(late);
          clearTimeout(timeout);
          resolve(answer.split("\r\n")[0] ?? "");
        });
      });

    // With the body late, the route ran before any byte was read: it hung, its reading paused by the pipe's
    // backpressure.
    it.each([
      ["with the headers", 0],
      ["100 ms after the headers", 100],
    ])("body sent %s", async (_, delayMs) => {
      const onError = vi.fn();
      const handler = vi.fn(() => json(200, {}));
      const app = Fastify();
      app.addHook("preParsing", async (_request, _reply, payload) => payload.pipe(new PassThrough()));
      await app.register(restWebhooks, { handler, onError });
      await listen(app);
      const port = (app.server.address() as AddressInfo).port;
      expect(await postLate(port, delayMs, Buffer.alloc(200_000, 97))).toBe("HTTP/1.1 500 Internal Server Error");
      expect(handler).not.toHaveBeenCalled();
      expect(onError).toHaveBeenCalledTimes(1);
      expect(onError.mock.calls[0]?.[0]).toBeInstanceOf(TypeError);
    });
  });

  // Regression: a plugin's misuse (a secret verification cannot use, a handler that is none) was thrown inside avvio,
  // an uncaught exception, while register() waited out its plugin timeout.
  describe("regression: options refused when registering reject register() with the TypeError", () => {
    it.each([
      ["webhookConsumer with a number as secrets", { plugin: "consumer" as const }],
      ["restWebhooks with a string as handler", { plugin: "rest" as const }],
    ])("%s", async (_name, { plugin }) => {
      const app = Fastify({ pluginTimeout: 60_000 });
      const registered =
        plugin === "consumer"
          ? app.register(webhookConsumer, { ...webhookFixture().options, secrets: 5 as never, url: "/webhooks" })
          : app.register(restWebhooks, { handler: "/api" as never });
      await expect(registered.ready()).rejects.toBeInstanceOf(TypeError);
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

    // docs/webhooks-consumers.md, "Which bytes are signed": the node adapter's answers, from Fastify too.
    it('answers a Content-Encoding: gzip delivery 415, and with parse: "none" verifies the coded bytes as sent', async () => {
      const fixture = webhookFixture();
      const app = Fastify();
      await app.register(webhookConsumer, { url: "/webhooks", ...fixture.options });
      await app.register(webhookConsumer, { url: "/raw", ...fixture.options, parse: "none" });
      const base = await listen(app);
      const { body, headers } = fixture.delivery("msg_gz");
      const coded = { ...headers, "content-encoding": "gzip" };
      const refused = await fetch(`${base}/webhooks`, { method: "POST", body: gzipSync(body), headers: coded });
      expect(refused.status).toBe(415);
      expect(refused.headers.get("accept-encoding")).toBe("identity");
      expect(await refused.json()).toMatchObject({ code: "unsupported_content_coding" });
      const bytes = gzipSync(body);
      const signed = sign({
        id: "msg_gz_raw",
        timestamp: Math.floor(Date.now() / 1000),
        body: bytes,
        secrets: fixture.secret,
      });
      const raw = await fetch(`${base}/raw`, { method: "POST", body: bytes, headers: { ...coded, ...signed } });
      expect(raw.status).toBe(202);
      expect(await fixture.inbox.get("msg_gz_raw")).toBeDefined();
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
      // regression: a method outside Fastify's nine got Fastify's 404.
      const propfind = await fetch(`${base}/webhooks`, { method: "PROPFIND" });
      expect(propfind.status).toBe(405);
      expect(propfind.headers.get("allow")).toBe("POST");
      expect(await fixture.inbox.get("msg_bad")).toBeUndefined();
    });
  });
});
