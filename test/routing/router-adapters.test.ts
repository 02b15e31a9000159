// The router through both adapters, node (raw sockets, so a target reaches the server as sent) and Fetch: what
// broke once on one of them, checked on both.
import type { Server } from "node:http";
import { afterAll, describe, expect, it } from "vitest";
import { adapt } from "../../src/fetch/index";
import { withAfterSend } from "../../src/http/after-send";
import { type Handler, json } from "../../src/http/message";
import { createServer } from "../../src/node/index";
import { createRouter, type RouterOptions } from "../../src/routing/index";
import { closeAll, exchange, firstResponse, listen } from "../node/raw-exchange";

const servers: Server[] = [];
afterAll(() => closeAll(servers));

interface Answer {
  readonly status: number;
  readonly location: string | undefined;
  readonly body: unknown;
}

type Send = (method: string, target: string) => Promise<Answer>;

/** Serves `handler` with the node adapter; the target goes on the request line as given. */
async function overNode(handler: Handler): Promise<Send> {
  const port = await listen(servers, createServer(handler));
  return async (method, target) => {
    const { received } = await exchange(
      port,
      `${method} ${target} HTTP/1.1\r\nhost: shop.example\r\nconnection: close\r\n\r\n`,
    );
    const response = firstResponse(received);
    // The head as sent: `response.head` is lower-cased.
    const location = /^location: (.*)\r$/im.exec(received.slice(0, received.indexOf("\r\n\r\n") + 2))?.[1];
    return { status: response.status, location, body: response.body };
  };
}

/** Serves `handler` with the Fetch adapter; the target is parsed by the runtime's URL parser, as a client's is. */
async function overFetch(handler: Handler): Promise<Send> {
  const fetchHandler = adapt(handler);
  return async (method, target) => {
    const response = await fetchHandler(new Request(`http://shop.example${target}`, { method }));
    const text = await response.text();
    return {
      status: response.status,
      location: response.headers.get("location") ?? undefined,
      body: text === "" ? undefined : JSON.parse(text),
    };
  };
}

const adapters = { node: overNode, fetch: overFetch } as const;
const names = Object.keys(adapters) as (keyof typeof adapters)[];

describe.each(names)("router over the %s adapter", (name) => {
  const serve = adapters[name];

  describe("regression: open redirect, GET /\\evil.example/repos/ answered 308 Location: /\\evil.example/repos", () => {
    const repos = (options: RouterOptions) =>
      createRouter(options)
        .route("GET", "/{org}/repos", {}, ({ params }) => json(200, { org: params.org }))
        .handler();
    // RFC 3986 §4.2: "//" starts a network-path reference; a browser reads "/\" so too.
    const elsewhere = /^\/[/\\]/;

    it.each([
      ["trailingSlash", "/\\evil.example/repos/"],
      ["trailingSlash", "//evil.example/repos/"],
      ["duplicateSlashes", "//\\evil.example/repos"],
      ["duplicateSlashes", "/\\/evil.example/repos"],
    ] as const)("%s: redirect never sends a Location to another host (%s)", async (option, target) => {
      const send = await serve(repos({ [option]: "redirect" }));
      const answer = await send("GET", target);
      if (answer.status === 308) expect(answer.location).not.toMatch(elsewhere);
      else expect(answer).toMatchObject({ status: 404, location: undefined });
    });

    it("trailingSlash: a path that names another host once normalized is not found", async () => {
      const send = await serve(repos({ trailingSlash: "redirect" }));
      expect(await send("GET", "/\\evil.example/repos/")).toMatchObject({ status: 404, location: undefined });
    });

    it("still redirects an ordinary path", async () => {
      const send = await serve(repos({ trailingSlash: "redirect", duplicateSlashes: "redirect" }));
      expect(await send("GET", "/acme//repos/?page=2")).toMatchObject({ status: 308, location: "/acme/repos?page=2" });
    });
  });

  describe('regression: node kept "\\" in the path, where a Fetch runtime reads it as "/" (WHATWG URL path state)', () => {
    const echo = () =>
      createRouter()
        .route("GET", "/files/{path*}", {}, ({ params, request }) =>
          json(200, { path: params.path, search: request.search }),
        )
        .route("GET", "/users/{name}", {}, ({ params }) => json(200, { name: params.name }))
        .route("GET", "/b", {}, () => json(200, { b: true }))
        .handler();

    it.each([
      ["/files/a\\..\\secret", { path: "secret", search: "" }],
      ["/files/a\\b?q=c\\d", { path: "a/b", search: "q=c\\d" }],
      ["/users/a\\..\\..\\b", { b: true }],
    ])("%s is matched as a Fetch runtime's URL has it", async (target, body) => {
      const send = await serve(echo());
      expect(await send("GET", target)).toMatchObject({ status: 200, body });
    });
  });

  describe("regression: HEAD answered from a GET route dropped the GET's after-send callback", () => {
    it("runs the callback for a HEAD as for the GET", async () => {
      const ran: string[] = [];
      const router = createRouter().route("GET", "/audited", {}, ({ request }) =>
        withAfterSend(json(200, { ok: true }), () => ran.push(request.method)),
      );
      const send = await serve(router.handler());
      expect((await send("HEAD", "/audited")).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(ran).toStrictEqual(["HEAD"]);
    });
  });

  describe('regression: created("..") answered Location: /items/.., which a client resolves to / (RFC 3986 §5.2.4)', () => {
    it.each([
      ["..", "/items/%2E%2E"],
      [".", "/items/%2E"],
      ["a.b", "/items/a.b"],
    ])("created(%j) names the item as router.url() does: %s", async (id, location) => {
      const router = createRouter().resource("/items/{item_id}", (items) => {
        items.create({}, ({ created }) => created(id));
        items.read({}, () => json(200, {}));
      });
      const send = await serve(router.handler());
      expect(await send("POST", "/items")).toMatchObject({ status: 201, location });
      expect(router.url("items.read", { item_id: id })).toBe(location);
    });
  });
});
