import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import express, { type Express, type RequestHandler } from "express";
import { afterEach, describe, expect, it, vi } from "vitest";
import { adapt, ExpressIntegrationError, webhookConsumer } from "../../src/express";
import { DEFAULT_BODY_LIMIT, json } from "../../src/http";
import { bodyConsumed } from "../../src/http/adapter-options";
import { adapt as nodeAdapt } from "../../src/node";
import { createRouter } from "../../src/routing";
import { createWebhookConsumer } from "../../src/webhooks/consumer";
import { expectedPayload, webhookFixture } from "../support/signed-webhook";

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function listen(app: Express | Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(app as Parameters<typeof createServer>[1]);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A POST whose body is sent chunked (no Content-Length), as a streaming sender does. */
function postChunked(url: string, body: Uint8Array, headers: Record<string, string>) {
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(body);
      controller.close();
    },
  });
  return fetch(url, { method: "POST", body: stream, headers, duplex: "half" } as RequestInit);
}

const router = () =>
  createRouter()
    .route("GET", "/items", { name: "items.list" }, ({ request }) => json(200, { path: request.path }))
    .route("POST", "/items", { name: "items.create" }, ({ request }) => json(201, { bytes: request.body.byteLength }));

describe("rest-webhooks/express", () => {
  describe("adapt(router)", () => {
    it("calls next() for a path the router has no route for, so Express's own routes answer", async () => {
      const app = express()
        .use(adapt(router()))
        .get("/native", (_req, res) => {
          res.json({ native: true });
        });
      const base = await listen(app);
      expect(await (await fetch(`${base}/items`)).json()).toStrictEqual({ path: "/items" });
      expect(await (await fetch(`${base}/native`)).json()).toStrictEqual({ native: true });
      const missing = await fetch(`${base}/missing`);
      expect(missing.status).toBe(404);
      expect(missing.headers.get("content-type")).toContain("text/html"); // Express's final handler, not ours
    });

    it("answers a known path with another method itself (405 with Allow), not through next()", async () => {
      const native = vi.fn();
      const app = express().use(adapt(router())).use(native);
      const response = await fetch(`${await listen(app)}/items`, { method: "DELETE" });
      expect(response.status).toBe(405);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      expect(native).not.toHaveBeenCalled();
    });

    it("sees paths relative to its mount point", async () => {
      const app = express().use("/api", adapt(router()));
      const base = await listen(app);
      expect(await (await fetch(`${base}/api/items?x=1`)).json()).toStrictEqual({ path: "/items" });
      expect((await fetch(`${base}/items`)).status).toBe(404);
    });

    it("takes the bytes express.raw() already read", async () => {
      const app = express()
        .use(express.raw({ type: "*/*" }))
        .use(adapt(router()));
      const response = await fetch(`${await listen(app)}/items`, { method: "POST", body: "12345" });
      expect(response.status).toBe(201);
      expect(await response.json()).toStrictEqual({ bytes: 5 });
    });

    it("refuses a body express.raw() read that is over its own bodyLimit with 413", async () => {
      const app = express()
        .use(express.raw({ type: "*/*" }))
        .use(adapt(router(), { bodyLimit: 4 }));
      const response = await fetch(`${await listen(app)}/items`, { method: "POST", body: "12345" });
      expect(response.status).toBe(413);
      expect(await response.json()).toMatchObject({ code: "body_too_large", limit: 4 });
    });

    it("serves requests without a body behind express.json()", async () => {
      const app = express().use(express.json()).use(adapt(router()));
      expect((await fetch(`${await listen(app)}/items`)).status).toBe(200);
    });

    it("regression: serves an empty chunked body behind express.json() with an empty body, as node does (not 500)", async () => {
      const onError = vi.fn();
      const app = express().use(express.json()).use(adapt(router(), { onError }));
      const port = Number(new URL(await listen(app)).port);
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        // No body bytes and no Content-Length: node sends `Transfer-Encoding: chunked` and the last chunk, 0 CRLF CRLF.
        const req = httpRequest(
          { host: "127.0.0.1", port, method: "POST", path: "/items", headers: { "content-type": "application/json" } },
          (res) => {
            let body = "";
            res.on("data", (chunk: Buffer) => {
              body += chunk.toString();
            });
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on("error", reject);
        req.flushHeaders();
        req.end();
      });
      expect(answer).toStrictEqual({ status: 201, body: '{"bytes":0}' });
      expect(onError).not.toHaveBeenCalled();
    });

    describe("regression: behind app.use(path, ...), the router's own locations left the mount", () => {
      const mounted = () =>
        createRouter({ trailingSlash: "redirect" }).resource("/items/{item_id}", (items) => {
          items.create({}, ({ created }) => created("i1"));
          items.list({}, () => json(200, []));
        });

      it("gives a create's Location and a slash redirect the mount's path", async () => {
        const base = await listen(express().use("/api", adapt(mounted())));
        const create = await fetch(`${base}/api/items`, { method: "POST" });
        expect(create.status).toBe(201);
        expect(create.headers.get("location")).toBe("/api/items/i1");
        const slash = await fetch(`${base}/api/items/?x=1`, { redirect: "manual" });
        expect(slash.status).toBe(308);
        expect(slash.headers.get("location")).toBe("/api/items?x=1");
      });

      it("follows a parameterized mount as the client sent it, and none at the root", async () => {
        const base = await listen(express().use("/t/:tenant", adapt(mounted())).use(adapt(mounted())));
        const tenant = await fetch(`${base}/t/acme/items`, { method: "POST" });
        expect(tenant.headers.get("location")).toBe("/t/acme/items/i1");
        const root = await fetch(`${base}/items`, { method: "POST" });
        expect(root.headers.get("location")).toBe("/items/i1");
      });
    });

    describe("regression: a Content-Encoding: gzip body behind express.raw() is never handed on decoded", () => {
      const sent = gzipSync("hello");
      const post = (base: string) =>
        fetch(`${base}/items`, {
          method: "POST",
          body: sent,
          headers: { "content-type": "application/octet-stream", "content-encoding": "gzip" },
        });

      it("with its default inflate: true, the decoded bytes (another length than Content-Length) are 500 body_consumed", async () => {
        const onError = vi.fn();
        const app = express()
          .use(express.raw({ type: "*/*" }))
          .use(adapt(router(), { onError }));
        const response = await post(await listen(app));
        expect(response.status).toBe(500);
        expect(await response.json()).toStrictEqual(bodyConsumed(new TypeError()).toJSON());
        const [error] = onError.mock.calls[0] as [ExpressIntegrationError];
        expect(error).toBeInstanceOf(ExpressIntegrationError);
        expect(error).toMatchObject({ code: "body_consumed" });
        expect(error.message).toContain("inflate: false");
      });

      // Regression: without a Content-Length the decoded bytes were handed on as the body, the Content-Encoding field
      // still naming gzip: a handler reading raw bytes (or a signature check) saw other bytes than node gives it.
      it("with its default inflate: true, sent chunked (no Content-Length), it is 500 body_consumed too", async () => {
        const onError = vi.fn();
        const handler = vi.fn(() => json(200, {}));
        const app = express()
          .use(express.raw({ type: "*/*" }))
          .use(adapt(handler, { onError }));
        const response = await postChunked(`${await listen(app)}/items`, sent, {
          "content-type": "application/octet-stream",
          "content-encoding": "gzip",
        });
        expect(response.status).toBe(500);
        expect(await response.json()).toStrictEqual(bodyConsumed(new TypeError()).toJSON());
        expect(handler).not.toHaveBeenCalled();
        expect(onError.mock.calls[0]?.[0]).toMatchObject({ code: "body_consumed" });
      });

      it("with inflate: false, as recommended, Express's body-parser refuses it (415) and the adapter never runs", async () => {
        const handler = vi.fn(() => json(200, {}));
        const app = express()
          .use(express.raw({ type: "*/*", inflate: false }))
          .use(adapt(handler));
        expect((await post(await listen(app))).status).toBe(415);
        expect(handler).not.toHaveBeenCalled();
      });

      it("mounted before any parser, the handler gets the bytes as sent, as from node", async () => {
        const app = express().use(adapt((request) => json(200, { bytes: [...request.body] })));
        expect(await (await post(await listen(app))).json()).toStrictEqual({ bytes: [...sent] });
      });
    });

    describe("regression: a body a middleware of the app read itself (no parser, req.body unset) is answered at once", () => {
      const readAll: RequestHandler = (req, _res, next) => {
        req.on("data", () => undefined);
        req.on("end", () => next());
      };
      const readPart: RequestHandler = (req, _res, next) => {
        req.once("data", () => {
          req.pause();
          next();
        });
      };
      it.each([
        ["read to its end", readAll, "{}"],
        ["read in part, then paused (it hung, waiting for the rest)", readPart, "x".repeat(200_000)],
      ])("%s: 500 body_consumed, onError an ExpressIntegrationError", async (_, before, body) => {
        const onError = vi.fn();
        const app = express().use(before).use(adapt(router(), { onError }));
        const response = await fetch(`${await listen(app)}/items`, {
          method: "POST",
          body,
          signal: AbortSignal.timeout(1_000),
        });
        expect(response.status).toBe(500);
        expect(await response.json()).toStrictEqual(bodyConsumed(new TypeError()).toJSON());
        expect(onError).toHaveBeenCalledTimes(1);
        const [error, request] = onError.mock.calls[0] as [unknown, { path: string }];
        expect(error).toBeInstanceOf(ExpressIntegrationError);
        expect(error).toMatchObject({ code: "body_consumed" });
        expect(request.path).toBe("/items");
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
      const guarded = () =>
        express()
          .use("/admin", (_req, res) => {
            res.status(403).send("forbidden");
          })
          .use(
            adapt(createRouter().route("GET", "/admin/users", { name: "admin" }, () => json(200, { secret: true }))),
          );

      it.each([
        "/public/../admin/users",
        "/public/%2e%2E/admin/users",
        "/./admin/users",
        "/admin\\users",
        "http://127.0.0.1/public/../admin/users",
      ])("%s: 400 bad_request_target (Express matched it as sent; the router would see /admin/users)", async (path) => {
        const response = await get(await listen(guarded()), path);
        expect(response.status).toBe(400);
        expect(JSON.parse(response.body)).toMatchObject({ code: "bad_request_target" });
      });

      it("the guard still answers the path as sent, and dots in the query or inside a segment are data", async () => {
        const base = await listen(
          guarded().use(adapt(createRouter().route("GET", "/files/a..b", { name: "f" }, () => json(200, {})))),
        );
        expect((await get(base, "/admin/users")).status).toBe(403);
        expect((await get(base, "/files/a..b?next=/../x")).status).toBe(200);
      });
    });

    it("refuses a plain object as app with a TypeError", () => {
      expect(() => adapt({} as never)).toThrow(TypeError);
    });
  });

  describe("webhookConsumer", () => {
    it("delivers a signed webhook end to end, mounted before express.json()", async () => {
      const fixture = webhookFixture();
      const app = express()
        .post("/webhooks", webhookConsumer(fixture.options))
        .use(express.json())
        .post("/echo", (req, res) => {
          res.json(req.body);
        });
      const base = await listen(app);
      const { body, headers } = fixture.delivery("msg_express");
      const response = await fetch(`${base}/webhooks`, { method: "POST", body, headers });
      expect(response.status).toBe(202);
      expect(await fixture.drain()).toStrictEqual([expectedPayload("msg_express")]);
      // The app's JSON routes still get their parser.
      const echo = await fetch(`${base}/echo`, { method: "POST", body: '{"a":1}', headers });
      expect(await echo.json()).toStrictEqual({ a: 1 });
    });

    it("regression: mounted after express.json(): the 500 body_consumed problem of the other adapters (not a bare internal_error), its cause saying what to change, never a signature failure", async () => {
      const fixture = webhookFixture();
      const onError = vi.fn();
      const app = express()
        .use(express.json())
        .post("/webhooks", webhookConsumer({ ...fixture.options, onError }));
      const { body, headers } = fixture.delivery("msg_parsed");
      const response = await fetch(`${await listen(app)}/webhooks`, { method: "POST", body, headers });
      expect(response.status).toBe(500);
      // The document the node and Fetch adapters send for the same mistake (one factory).
      expect(await response.json()).toStrictEqual(bodyConsumed(new TypeError()).toJSON());
      expect(onError).toHaveBeenCalledTimes(1);
      const [error, request] = onError.mock.calls[0] as [unknown, { path: string }];
      expect(error).toBeInstanceOf(ExpressIntegrationError);
      expect(error).toMatchObject({ code: "body_consumed" });
      expect(request.path).toBe("/webhooks");
      expect(await fixture.inbox.get("msg_parsed")).toBeUndefined();
    });

    it("verifies after express.raw() on its path", async () => {
      const fixture = webhookFixture();
      const app = express()
        .post("/webhooks", express.raw({ type: "*/*", inflate: false }), webhookConsumer(fixture.options))
        .use(express.json());
      const { body, headers } = fixture.delivery("msg_raw");
      const response = await fetch(`${await listen(app)}/webhooks`, { method: "POST", body, headers });
      expect(response.status).toBe(202);
      expect(await fixture.drain()).toStrictEqual([expectedPayload("msg_raw")]);
    });

    it("regression: the express.raw() it recommends carries the adapter's bodyLimit, so a body the adapter takes is not refused", async () => {
      const onError = vi.fn();
      const handler = (request: { body: Uint8Array }) => json(200, { bytes: request.body.byteLength });
      const parsed = await fetch(
        `${await listen(express().use(express.json()).use(adapt(handler, { onError })))}/hook`,
        {
          method: "POST",
          body: "{}",
          headers: { "content-type": "application/json" },
        },
      );
      expect(parsed.status).toBe(500);
      const [error] = onError.mock.calls[0] as [ExpressIntegrationError];
      // The advice names the limit (the default 1 MiB here): express.raw's own default is 100 kB.
      expect(error.message).toContain(`express.raw({ type: "*/*", inflate: false, limit: ${DEFAULT_BODY_LIMIT} })`);
      // Followed, the advice takes a 200 kB body, which express.raw({ type: "*/*" }) alone refuses with an HTML 413.
      const base = await listen(
        express()
          .use(express.raw({ type: "*/*", inflate: false, limit: DEFAULT_BODY_LIMIT }))
          .use(adapt(handler)),
      );
      const big = await fetch(`${base}/hook`, { method: "POST", body: "x".repeat(200_000) });
      expect(await big.json()).toStrictEqual({ bytes: 200_000 });
    });

    // Regression: behind express.raw()'s default inflate: true a gzip delivery was 500 body_consumed with a
    // Content-Length and checked on the decoded bytes without one, where node answers it 415 from its headers.
    describe("a signed delivery sent with Content-Encoding: gzip", () => {
      const coded = (fixture: ReturnType<typeof webhookFixture>, id: string) => {
        const { body, headers } = fixture.delivery(id);
        return { bytes: gzipSync(body), headers: { ...headers, "content-encoding": "gzip" } };
      };
      const answer = async (response: Response) => ({
        status: response.status,
        acceptEncoding: response.headers.get("accept-encoding"),
        body: await response.json(),
      });
      const send = async (base: string, chunked: boolean, delivery: ReturnType<typeof coded>) =>
        answer(
          chunked
            ? await postChunked(`${base}/webhooks`, delivery.bytes, delivery.headers)
            : await fetch(`${base}/webhooks`, { method: "POST", body: delivery.bytes, headers: delivery.headers }),
        );

      it.each([
        ["with a Content-Length", false],
        ["chunked", true],
      ])("%s gets the node adapter's answer (415), behind express.raw() or not", async (_name, chunked) => {
        const fixture = webhookFixture();
        const node = await send(
          await listen(nodeAdapt(createWebhookConsumer(fixture.options))),
          chunked,
          coded(fixture, "msg_gz_node"),
        );
        expect(node).toMatchObject({
          status: 415,
          acceptEncoding: "identity",
          body: { code: "unsupported_content_coding" },
        });
        const apps = [
          express().post("/webhooks", webhookConsumer(fixture.options)),
          express().post("/webhooks", express.raw({ type: "*/*" }), webhookConsumer(fixture.options)),
        ];
        for (const app of apps) {
          expect(await send(await listen(app), chunked, coded(fixture, "msg_gz_express"))).toStrictEqual(node);
        }
        expect(await fixture.inbox.get("msg_gz_express")).toBeUndefined();
      });

      it.each([
        ["with a Content-Length", false],
        ["chunked", true],
      ])(
        '%s with parse: "none" behind express.raw() is 500 body_consumed, never verified on the decoded bytes',
        async (_name, chunked) => {
          const fixture = webhookFixture();
          const onError = vi.fn();
          const options = { ...fixture.options, parse: "none" as const, onError };
          const app = express().post("/webhooks", express.raw({ type: "*/*" }), webhookConsumer(options));
          // Signed over the bytes before the coding: verified on the decoded bytes, it would be accepted.
          const { body, headers } = fixture.delivery("msg_gz_none");
          const delivery = { bytes: gzipSync(body), headers: { ...headers, "content-encoding": "gzip" } };
          const response = await send(await listen(app), chunked, delivery);
          expect(response).toMatchObject({ status: 500, body: bodyConsumed(new TypeError()).toJSON() });
          expect(onError.mock.calls[0]?.[0]).toMatchObject({ code: "body_consumed" });
          expect(await fixture.inbox.get("msg_gz_none")).toBeUndefined();
        },
      );
    });

    it("answers a tampered delivery 400, stores nothing", async () => {
      const fixture = webhookFixture();
      const app = express().post("/webhooks", webhookConsumer(fixture.options));
      const { body, headers } = fixture.delivery("msg_bad");
      const response = await fetch(`${await listen(app)}/webhooks`, {
        method: "POST",
        body: body.replace("msg_bad", "msg_bae"),
        headers,
      });
      expect(response.status).toBe(400);
      expect(await fixture.inbox.get("msg_bad")).toBeUndefined();
    });
  });
});
