/**
 * The contract every adapter and framework integration passes (STYLE §12): one suite, run by test/node,
 * test/fetch, test/express, test/fastify and test/frameworks (Hono, Next.js) — and on Bun and Deno by
 * test/runtimes — with a factory that serves a handler or a router and gives back a `send` function.
 */
import { afterAll, describe, expect, it, vi } from "vitest";
import type { AdapterOptions } from "../../src/http/adapter-options";
import { withAfterSend } from "../../src/http/after-send";
import { jsonBody, safeFormBody } from "../../src/http/body";
import { empty, type Handler, type HttpRequest, json } from "../../src/http/message";
import { HttpProblem } from "../../src/http/problem";
import { withMethod } from "../../src/http/with-method";
import { createRouter, type Router, routeOf } from "../../src/routing/index";

/** A request as a test sends it. */
export interface ContractRequest {
  method?: string;
  /** Origin-form target, e.g. `/a?b=1`. */
  path: string;
  headers?: Record<string, string>;
  body?: Uint8Array | string;
  /**
   * A streamed body: `total` bytes in chunks of `chunk` bytes, stopped as soon as the response arrives;
   * with `holdUntilResponse`, no byte is sent before the response (the server must answer on headers alone).
   */
  stream?: { total: number; chunk: number; holdUntilResponse?: boolean };
  signal?: AbortSignal;
}

/** A response as a test sees it; `bytesSent` counts the streamed body bytes the adapter pulled in. */
export interface ContractResponse {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
  bytesSent: number;
}

/** A running adapter under test. */
export interface AdapterHarness {
  send(request: ContractRequest): Promise<ContractResponse>;
  close(): Promise<void>;
  /**
   * A framework integration that matched its own routes and middleware on the path as sent (Express, Fastify): it
   * answers a path with dot-segments 400 `bad_request_target` rather than serve the resolved one.
   */
  refusesDotSegments?: boolean;
}

/**
 * Serves `app` through the adapter under test. A router is mounted as the integration mounts one (Express and
 * Fastify hand the paths it does not know back to the framework); a bare adapter serves `router.handler()`.
 */
export type AdapterFactory = (app: Handler | Router, options: AdapterOptions) => Promise<AdapterHarness>;

const decoder = new TextDecoder();
const text = (response: ContractResponse) => decoder.decode(response.body);
const parsed = (response: ContractResponse) => JSON.parse(text(response)) as Record<string, unknown>;

/** Echoes what the adapter made of the request. */
const echo: Handler = (request) =>
  json(200, {
    method: request.method,
    path: request.path,
    search: request.search,
    query: request.query,
    headers: request.headers,
    bytes: Array.from(request.body),
  });

/** Runs the adapter contract against `factory`. */
export function adapterContract(name: string, factory: AdapterFactory): void {
  describe(`${name} adapter contract`, () => {
    const harnesses: AdapterHarness[] = [];
    const onError = vi.fn();
    const serve = async (handler: Handler | Router, options: AdapterOptions = {}) => {
      const harness = await factory(handler, { onError, ...options });
      harnesses.push(harness);
      return harness;
    };
    afterAll(async () => {
      await Promise.all(harnesses.map((h) => h.close()));
    });

    describe("request model", () => {
      it("keeps the path percent-encoded and splits off the raw query", async () => {
        const { send } = await serve(echo);
        const doc = parsed(await send({ path: "/a%20b/c%2Fd?x=1%202&x=3&y=%C3%A9&z" }));
        expect(doc.path).toBe("/a%20b/c%2Fd");
        expect(doc.search).toBe("x=1%202&x=3&y=%C3%A9&z");
      });

      it("regression: removes dot-segments from the path as a URL parser does, %2e included (RFC 3986 §5.2.4)", async () => {
        const { send, refusesDotSegments } = await serve(echo);
        const sent = ["/a/../b", "/files/../../etc/passwd", "/items/%2E%2E", "/a/./b/.", "/a/.%2e/b?x=/../y"];
        const responses = await Promise.all(sent.map((path) => send({ path })));
        if (refusesDotSegments) {
          for (const response of responses)
            expect(parsed(response)).toMatchObject({ status: 400, code: "bad_request_target" });
          return;
        }
        const paths = responses.map(parsed);
        expect(paths.map((doc) => doc.path)).toStrictEqual(["/b", "/etc/passwd", "/", "/a/b/", "/b"]);
        expect(paths[4]?.search).toBe("x=/../y");
      });

      it("regression: drops a fragment sent in the target (RFC 3986 §3.5), from the path and the query", async () => {
        const { send } = await serve(echo);
        const doc = parsed(await send({ path: "/items/x?q=1#frag?r=2" }));
        expect(doc.path).toBe("/items/x");
        expect(doc.search).toBe("q=1");
      });

      it("decodes the query, repeated names as arrays", async () => {
        const { send } = await serve(echo);
        const doc = parsed(await send({ path: "/q?x=1%202&x=3&y=%C3%A9&z&plus=a+b&ids[]=7" }));
        expect(doc.query).toStrictEqual({ x: ["1 2", "3"], y: "é", z: "", plus: "a b", ids: ["7"] });
      });

      it("gives an empty query and search when there is none", async () => {
        const { send } = await serve(echo);
        const doc = parsed(await send({ path: "/plain" }));
        expect(doc.search).toBe("");
        expect(doc.query).toStrictEqual({});
      });

      it("lower-cases header names", async () => {
        const { send } = await serve(echo);
        const doc = parsed(await send({ path: "/", headers: { "X-Custom-Thing": "Value" } }));
        expect((doc.headers as Record<string, string>)["x-custom-thing"]).toBe("Value");
      });

      it("regression: gives a Set-Cookie request field as a string, as every other field (node gave an array)", async () => {
        const { send } = await serve(echo);
        const doc = parsed(await send({ path: "/", headers: { "Set-Cookie": "a=1" } }));
        expect((doc.headers as Record<string, unknown>)["set-cookie"]).toBe("a=1");
      });

      it("passes the method through", async () => {
        const { send } = await serve(echo);
        expect(parsed(await send({ method: "PATCH", path: "/", body: "{}" })).method).toBe("PATCH");
        expect(parsed(await send({ method: "DELETE", path: "/" })).method).toBe("DELETE");
      });

      it("preserves raw body bytes exactly, including bytes that are not UTF-8", async () => {
        const { send } = await serve(echo);
        const bytes = new Uint8Array([0xff, 0x00, 0xfe, 0x80, 0xc3, 0x28, 0x0d, 0x0a, 0x7f]);
        const doc = parsed(
          await send({
            method: "POST",
            path: "/",
            headers: { "content-type": "application/octet-stream" },
            body: bytes,
          }),
        );
        expect(doc.bytes).toStrictEqual(Array.from(bytes));
      });

      it("preserves a body that arrives in many chunks", async () => {
        let received: Uint8Array = new Uint8Array(0);
        const { send } = await serve((request) => {
          received = request.body;
          return empty(204);
        });
        const response = await send({ method: "POST", path: "/", stream: { total: 300_000, chunk: 7_001 } });
        expect(response.status).toBe(204);
        expect(received.byteLength).toBe(300_000);
        expect(received.every((byte, i) => byte === i % 251)).toBe(true);
      });

      it("gives an empty body for GET, for a bodiless POST and for Content-Length: 0", async () => {
        const { send } = await serve(echo);
        expect(parsed(await send({ path: "/" })).bytes).toStrictEqual([]);
        expect(parsed(await send({ method: "POST", path: "/" })).bytes).toStrictEqual([]);
        expect(parsed(await send({ method: "POST", path: "/", body: "" })).bytes).toStrictEqual([]);
      });
    });

    describe("withMethod: a copy of the adapter's request that keeps every field (issue 16)", () => {
      /** Reads every field of the request and of its copy, as a handler given the copy would. */
      const fields = (request: HttpRequest) => ({
        method: request.method,
        path: request.path,
        search: request.search,
        query: request.query,
        headers: request.headers,
        bytes: Array.from(request.body),
        remoteAddress: request.remoteAddress ?? null,
        signal: request.signal instanceof AbortSignal,
      });

      it("keeps path, search, query, headers, body, peer address and signal; only the method changes", async () => {
        let same = false;
        const { send } = await serve((request) => {
          const copy = withMethod(request, "GET");
          same = copy.signal === request.signal && copy.query === request.query && copy.body === request.body;
          return json(200, { original: fields(request), copy: fields(copy) });
        });
        const doc = parsed(
          await send({
            method: "POST",
            path: "/a%20b?x=1%202&x=3&y=%C3%A9",
            headers: { "content-type": "text/plain", "x-trace": "t-1" },
            body: "hello",
          }),
        ) as { original: ReturnType<typeof fields>; copy: ReturnType<typeof fields> };
        expect(doc.copy).toStrictEqual({ ...doc.original, method: "GET" });
        expect(doc.copy.query).toStrictEqual({ x: ["1 2", "3"], y: "é" });
        expect(doc.copy.bytes).toStrictEqual(Array.from(new TextEncoder().encode("hello")));
        expect(doc.copy.signal).toBe(doc.original.signal);
        expect(same).toBe(true);
      });

      it("keeps the router's match, so a HEAD answered as GET reads the same params", async () => {
        const router = createRouter().route("GET", "/users/{id}", {}, ({ request }) => {
          const copy = withMethod(request, "GET");
          return json(200, { params: routeOf(copy)?.params, query: copy.query });
        });
        const { send } = await serve(router.handler());
        const doc = parsed(await send({ path: "/users/u%201?fields=name" }));
        expect(doc).toStrictEqual({ params: { id: "u 1" }, query: { fields: "name" } });
      });

      it("gives the copy the client-abort signal of the original", async () => {
        let resolveAborted: (value: boolean) => void = () => {};
        const aborted = new Promise<boolean>((resolve) => (resolveAborted = resolve));
        let resolveStarted: () => void = () => {};
        const started = new Promise<void>((resolve) => (resolveStarted = resolve));
        const { send } = await serve(
          (request: HttpRequest) =>
            new Promise((resolve) => {
              const signal = withMethod(request, "GET").signal;
              signal?.addEventListener("abort", () => {
                resolveAborted(true);
                resolve(empty(204));
              });
              resolveStarted();
            }),
        );
        const controller = new AbortController();
        const pending = send({ path: "/slow", signal: controller.signal }).catch((error: unknown) => error);
        await started;
        controller.abort();
        await expect(aborted).resolves.toBe(true);
        await pending;
      });
    });

    describe("a router through the integration", () => {
      const items = () =>
        createRouter()
          .route("GET", "/items", { name: "items.list" }, ({ request }) => json(200, { query: request.query }))
          .route("POST", "/items", { name: "items.create" }, () => json(201, { created: true }));

      it("answers its routes, repeated query names as arrays", async () => {
        const { send } = await serve(items());
        const response = await send({ path: "/items?tag=a&tag=b&one=1" });
        expect(response.status).toBe(200);
        expect(parsed(response)).toStrictEqual({ query: { tag: ["a", "b"], one: "1" } });
        expect((await send({ method: "POST", path: "/items", body: "{}" })).status).toBe(201);
      });

      it("answers HEAD from the GET route, headers without content (RFC 9110 §9.3.2)", async () => {
        const { send } = await serve(items());
        const response = await send({ method: "HEAD", path: "/items?x=1" });
        expect(response.status).toBe(200);
        expect(response.headers["content-length"]).toBe(String('{"query":{"x":"1"}}'.length));
        expect(response.body.byteLength).toBe(0);
      });

      it("answers a known path with another method 405 with Allow, as a problem (RFC 9110 §15.5.6)", async () => {
        const { send } = await serve(items());
        const response = await send({ method: "DELETE", path: "/items" });
        expect(response.status).toBe(405);
        expect(response.headers["content-type"]).toBe("application/problem+json");
        expect(response.headers.allow?.split(", ")).toEqual(expect.arrayContaining(["GET", "HEAD", "POST"]));
        expect(parsed(response)).toMatchObject({ status: 405, code: "method_not_allowed" });
      });

      it("regression: routes /a/../b to /b (the integration matches the router on the same path the handler sees)", async () => {
        const { send, refusesDotSegments } = await serve(items());
        const response = await send({ path: "/elsewhere/../items?tag=a" });
        if (refusesDotSegments) {
          expect(response.status).toBe(400);
          expect(parsed(response)).toMatchObject({ code: "bad_request_target" });
          return;
        }
        expect(response.status).toBe(200);
        expect(parsed(response)).toStrictEqual({ query: { tag: "a" } });
        expect((await send({ path: "/items/../nothing-here" })).status).toBe(404);
      });

      it("answers 404 for a path it has no route for (its own problem, or the framework's not-found)", async () => {
        const { send } = await serve(items());
        expect((await send({ path: "/nothing-here" })).status).toBe(404);
      });
    });

    describe("body limit (RFC 9110 §15.5.14)", () => {
      const limit = 1024;
      const handler = vi.fn(echo);

      it("accepts a body of exactly the limit", async () => {
        const { send } = await serve(echo, { bodyLimit: limit });
        const response = await send({ method: "POST", path: "/", body: new Uint8Array(limit) });
        expect(response.status).toBe(200);
      });

      it("answers 413 by the declared Content-Length without reading the body", async () => {
        handler.mockClear();
        const { send } = await serve(handler, { bodyLimit: limit });
        const total = 256 * 1024 * 1024;
        const response = await send({
          method: "POST",
          path: "/",
          headers: { "content-length": String(total) },
          stream: { total, chunk: 64 * 1024 },
        });
        expect(response.status).toBe(413);
        expect(response.headers["content-type"]).toBe("application/problem+json");
        expect(parsed(response)).toMatchObject({ status: 413, code: "body_too_large", limit });
        // Only what fits in socket buffers was sent before the answer, not the 256 MiB.
        expect(response.bytesSent).toBeLessThan(32 * 1024 * 1024);
        expect(handler).not.toHaveBeenCalled();
      });

      it("answers 413 on the headers alone, before any body byte is sent", async () => {
        const { send } = await serve(handler, { bodyLimit: limit });
        const total = 10 * 1024 * 1024;
        const response = await send({
          method: "POST",
          path: "/",
          headers: { "content-length": String(total) },
          stream: { total, chunk: 64 * 1024, holdUntilResponse: true },
        });
        expect(response.status).toBe(413);
        expect(response.bytesSent).toBe(0);
      });

      it("answers 413 once a streamed body without Content-Length passes the limit", async () => {
        handler.mockClear();
        const { send } = await serve(handler, { bodyLimit: limit });
        const total = 256 * 1024 * 1024;
        const response = await send({ method: "POST", path: "/", stream: { total, chunk: 16 * 1024 } });
        expect(response.status).toBe(413);
        expect(parsed(response)).toMatchObject({ code: "body_too_large" });
        expect(response.bytesSent).toBeLessThan(32 * 1024 * 1024);
        expect(handler).not.toHaveBeenCalled();
      });

      it("keeps serving after a 413", async () => {
        const { send } = await serve(echo, { bodyLimit: limit });
        expect((await send({ method: "POST", path: "/", body: new Uint8Array(limit + 1) })).status).toBe(413);
        expect((await send({ path: "/after" })).status).toBe(200);
      });
    });

    describe("body readers through the adapter", () => {
      const jsonEcho: Handler = (request) => json(200, { value: jsonBody(request) });

      it("reads JSON", async () => {
        const { send } = await serve(jsonEcho);
        const response = await send({
          method: "POST",
          path: "/",
          headers: { "content-type": "application/json" },
          body: '{"a":[1,"é"]}',
        });
        expect(parsed(response)).toStrictEqual({ value: { a: [1, "é"] } });
      });

      it("answers malformed JSON with a 400 problem", async () => {
        const { send } = await serve(jsonEcho);
        const response = await send({
          method: "POST",
          path: "/",
          headers: { "content-type": "application/json" },
          body: '{"a":',
        });
        expect(response.status).toBe(400);
        expect(response.headers["content-type"]).toBe("application/problem+json");
        expect(parsed(response)).toMatchObject({ status: 400, code: "malformed_json" });
      });

      it("answers a wrong Content-Type with a 415 problem", async () => {
        const { send } = await serve(jsonEcho);
        const response = await send({
          method: "POST",
          path: "/",
          headers: { "content-type": "text/plain" },
          body: "{}",
        });
        expect(response.status).toBe(415);
        expect(parsed(response)).toMatchObject({ status: 415, code: "unsupported_media_type" });
        expect(response.headers["accept-post"]).toBe("application/json");
      });

      it("answers an empty JSON body with a 400 problem", async () => {
        const { send } = await serve(jsonEcho);
        const response = await send({ method: "POST", path: "/", headers: { "content-type": "application/json" } });
        expect(response.status).toBe(400);
        expect(parsed(response)).toMatchObject({ code: "body_required" });
      });

      it("reads a form with repeated `name[]` keys as arrays", async () => {
        const { send } = await serve((request) => {
          const form = safeFormBody(request);
          return form.ok ? json(200, form.value) : form.problem.toResponse();
        });
        const response = await send({
          method: "POST",
          path: "/",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: "url=https%3A%2F%2Fexample.com&enabled_events[]=a.b&enabled_events[]=c.d",
        });
        expect(parsed(response)).toStrictEqual({ url: "https://example.com", enabled_events: ["a.b", "c.d"] });
      });
    });

    describe("errors", () => {
      it("answers a thrown error with a bare 500 problem, reports it, and keeps serving", async () => {
        onError.mockClear();
        const secret = new Error("db password is hunter2");
        const { send } = await serve((request) => {
          if (request.path === "/boom") throw secret;
          return json(200, { ok: true });
        });
        const response = await send({ path: "/boom" });
        expect(response.status).toBe(500);
        expect(response.headers["content-type"]).toBe("application/problem+json");
        const doc = parsed(response);
        expect(doc).toMatchObject({ status: 500, code: "internal_error", type: "about:blank" });
        expect(text(response)).not.toContain("hunter2");
        expect(text(response)).not.toContain("at ");
        expect(onError).toHaveBeenCalledWith(secret, expect.objectContaining({ path: "/boom" }));
        expect((await send({ path: "/next" })).status).toBe(200);
      });

      it("answers a rejected promise the same way", async () => {
        onError.mockClear();
        const { send } = await serve(async () => {
          await Promise.resolve();
          throw new TypeError("secret detail");
        });
        const response = await send({ path: "/" });
        expect(response.status).toBe(500);
        expect(text(response)).not.toContain("secret detail");
        expect(onError).toHaveBeenCalledTimes(1);
      });

      it("renders a thrown HttpProblem with its status and headers, without calling onError", async () => {
        onError.mockClear();
        const { send } = await serve(() => {
          throw new HttpProblem({ status: 405, code: "method_not_allowed", headers: { allow: "GET, HEAD" } });
        });
        const response = await send({ method: "PUT", path: "/", body: "x" });
        expect(response.status).toBe(405);
        expect(response.headers.allow).toBe("GET, HEAD");
        expect(response.headers["content-type"]).toBe("application/problem+json");
        expect(parsed(response)).toStrictEqual({
          type: "about:blank",
          title: "Method Not Allowed",
          status: 405,
          code: "method_not_allowed",
        });
        expect(onError).not.toHaveBeenCalled();
      });

      it("regression: answers a 1xx or a status outside 200..599 as a handler error: a 500 and onError", async () => {
        onError.mockClear();
        const { send } = await serve((request) => ({
          status: Number(request.path.slice(1)),
          headers: { link: "</s.css>; rel=preload" },
          body: "x",
        }));
        for (const status of [100, 103, 199, 600, 700, 999]) {
          const response = await send({ path: `/${status}` });
          expect(response.status).toBe(500);
          expect(parsed(response)).toMatchObject({ code: "internal_error" });
        }
        expect(onError).toHaveBeenCalledTimes(6);
        expect(onError.mock.calls.every(([error]) => error instanceof RangeError)).toBe(true);
        expect((await send({ path: "/200" })).status).toBe(200);
      });

      it("regression: an onError that throws still gives the client its 500, and the server keeps serving", async () => {
        const logged: unknown[][] = [];
        const original = console.error;
        console.error = (...args: unknown[]) => {
          logged.push(args);
        };
        try {
          const { send } = await serve(
            (request) => {
              if (request.path === "/ok") return json(200, { ok: true });
              throw new Error("handler failed");
            },
            {
              onError: () => {
                throw new Error("reporter failed");
              },
            },
          );
          const response = await send({ path: "/boom" });
          expect(response.status).toBe(500);
          expect(parsed(response)).toMatchObject({ code: "internal_error" });
          expect((await send({ path: "/ok" })).status).toBe(200);
          // The reporter's failure is not lost: it goes to stderr.
          expect(logged.length).toBeGreaterThan(0);
        } finally {
          console.error = original;
        }
      });

      it("answers a response the runtime refuses (a header with a newline) with a 500", async () => {
        onError.mockClear();
        const { send } = await serve(() => ({ status: 200, headers: { "x-bad": "a\nb" }, body: "x" }));
        const response = await send({ path: "/" });
        expect(response.status).toBe(500);
        expect(onError).toHaveBeenCalledTimes(1);
      });

      it("regression: answers a thrown HttpProblem whose headers the runtime refuses with a 500 and onError", async () => {
        // node reset the connection without an answer; the Fetch adapter's promise rejected; neither told onError.
        onError.mockClear();
        const { send } = await serve((request) => {
          const headers: Record<string, string> =
            request.path === "/name" ? { "retry after": "5" } : { "retry-after": "5\r\nx-injected: 1" };
          const problem = new HttpProblem({ status: 429, code: "slow_down", headers });
          if (request.path === "/async") return Promise.reject(problem);
          throw problem;
        });
        for (const path of ["/sync", "/async", "/name"]) {
          const response = await send({ path });
          expect(response.status).toBe(500);
          expect(parsed(response)).toMatchObject({ code: "internal_error" });
          expect(response.headers["x-injected"]).toBeUndefined();
        }
        expect(onError).toHaveBeenCalledTimes(3);
        expect(onError.mock.calls.every(([error]) => error instanceof Error && !(error instanceof HttpProblem))).toBe(
          true,
        );
      });
    });

    describe("after-send callbacks", () => {
      // The order against the client is proven from another thread in test/webhooks/consumer: in one
      // process, the server hands the bytes to the OS before this client can have read them.
      it("runs a response's after-send callback exactly once, after the response was sent", async () => {
        let calls = 0;
        let ranResolve = () => {};
        const ran = new Promise<void>((resolve) => {
          ranResolve = resolve;
        });
        const response = json(202, { ok: true });
        const { send } = await serve(() =>
          withAfterSend(response, () => {
            calls++;
            ranResolve();
          }),
        );
        expect((await send({ method: "POST", path: "/", body: "x" })).status).toBe(202);
        await ran;
        await new Promise((resolve) => setImmediate(resolve));
        expect(calls).toBe(1);
      });

      it("regression: does not run the callback when its response could not be sent and a 500 went instead", async () => {
        onError.mockClear();
        let calls = 0;
        const { send } = await serve(() =>
          withAfterSend({ status: 201, headers: { "x-bad": "a\r\nb" }, body: "created" }, () => {
            calls++;
          }),
        );
        expect((await send({ method: "POST", path: "/", body: "x" })).status).toBe(500);
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(calls).toBe(0);
        expect(onError).toHaveBeenCalledTimes(1);
      });

      it("reports a callback that throws to onError and keeps serving", async () => {
        onError.mockClear();
        const failure = new Error("wake failed");
        const reported = new Promise<void>((resolve) => {
          onError.mockImplementationOnce(() => resolve());
        });
        const { send } = await serve(() =>
          withAfterSend(empty(204), () => {
            throw failure;
          }),
        );
        expect((await send({ path: "/" })).status).toBe(204);
        await reported;
        expect(onError).toHaveBeenCalledWith(failure, expect.objectContaining({ path: "/" }));
        expect((await send({ path: "/" })).status).toBe(204);
      });
    });

    describe("responses", () => {
      it("sends Content-Length and the exact bytes", async () => {
        const bytes = new Uint8Array([0, 255, 1, 254]);
        const { send } = await serve(() => ({ status: 200, headers: {}, body: bytes }));
        const response = await send({ path: "/" });
        expect(response.headers["content-length"]).toBe("4");
        expect(Array.from(response.body)).toStrictEqual([0, 255, 1, 254]);
      });

      it("measures Content-Length of a string body in UTF-8 bytes", async () => {
        const { send } = await serve(() => ({ status: 200, headers: {}, body: "é€" }));
        expect((await send({ path: "/" })).headers["content-length"]).toBe("5");
      });

      it("does not modify the handler's header object (it may be shared)", async () => {
        const shared = { "content-type": "text/plain" };
        const { send } = await serve((request) => ({ status: 200, headers: shared, body: request.path }));
        expect(text(await send({ path: "/short" }))).toBe("/short");
        expect(text(await send({ path: "/a-longer-path" }))).toBe("/a-longer-path");
        expect(shared).toStrictEqual({ "content-type": "text/plain" });
      });

      it("sends repeated fields for an array value (Set-Cookie)", async () => {
        const { send } = await serve(() => ({ status: 200, headers: { "set-cookie": ["a=1", "b=2"] }, body: "" }));
        expect((await send({ path: "/" })).headers["set-cookie"]).toBe("a=1, b=2");
      });

      it("answers HEAD with the headers and no body (RFC 9110 §9.3.2)", async () => {
        const { send } = await serve(() => json(200, { hello: "world" }));
        const response = await send({ method: "HEAD", path: "/" });
        expect(response.status).toBe(200);
        expect(response.headers["content-type"]).toBe("application/json");
        expect(response.headers["content-length"]).toBe("17");
        expect(response.body.byteLength).toBe(0);
      });

      it("sends no content with a 204 or 304 even if the handler gives a body (RFC 9110 §6.4.1)", async () => {
        const { send } = await serve((request) => ({
          status: request.path === "/304" ? 304 : 204,
          headers: {},
          body: "ignored",
        }));
        for (const path of ["/204", "/304"]) {
          const response = await send({ path });
          expect(response.body.byteLength).toBe(0);
          expect(response.headers["content-length"]).toBeUndefined();
        }
      });

      it("regression: sends no Content-Length with a 204 even if the handler sets one (RFC 9110 §8.6)", async () => {
        const { send } = await serve(() => ({ status: 204, headers: { "Content-Length": "5" }, body: "hello" }));
        for (const path of ["/first", "/second"]) {
          const response = await send({ path });
          expect(response.status).toBe(204);
          expect(response.body.byteLength).toBe(0);
          expect(response.headers["content-length"]).toBeUndefined();
          expect(response.headers["transfer-encoding"]).toBeUndefined();
        }
      });

      it("regression: drops a handler's Transfer-Encoding, so one Content-Length frames the body (RFC 9112 §6.2)", async () => {
        const { send } = await serve((request) => {
          const headers: Record<string, string> =
            request.path === "/with-length"
              ? { "Transfer-Encoding": "chunked", "content-length": "5" }
              : { "transfer-encoding": "chunked", "content-type": "text/plain" };
          return { status: 200, headers, body: "hello" };
        });
        for (const path of ["/", "/with-length"]) {
          const response = await send({ path });
          expect(response.status).toBe(200);
          expect(response.headers["transfer-encoding"]).toBeUndefined();
          expect(response.headers["content-length"]).toBe("5");
          expect(text(response)).toBe("hello");
        }
      });

      it("regression: answers a handler's Content-Length that disagrees with its body with a 500 (RFC 9112 §6.3)", async () => {
        // Sent as given, a shorter one left the rest of the body to be read as the next response on the connection,
        // a longer one left the client waiting for bytes that never came.
        onError.mockClear();
        const { send } = await serve((request) => {
          if (request.path === "/none") return empty(200, { "content-length": "10" });
          const declared = request.path === "/ok" ? "5" : request.path.slice(1);
          return { status: 200, headers: { "content-type": "text/plain", "Content-Length": declared }, body: "hello" };
        });
        for (const path of ["/3", "/10", "/0", "/5,5", "/x", "/none"]) {
          const response = await send({ path });
          expect(response.status).toBe(500);
          expect(parsed(response)).toMatchObject({ code: "internal_error" });
          const next = await send({ path: "/ok" });
          expect(next.status).toBe(200);
          expect(text(next)).toBe("hello");
        }
        expect(onError).toHaveBeenCalledTimes(6);
        expect(onError.mock.calls.every(([error]) => error instanceof RangeError)).toBe(true);
        // HEAD: no body is sent, and the handler's length is the representation's (RFC 9110 §8.6).
        for (const path of ["/10", "/none"]) {
          const head = await send({ method: "HEAD", path });
          expect(head.status).toBe(200);
          expect(head.headers["content-length"]).toBe("10");
        }
        expect(onError).toHaveBeenCalledTimes(6);
      });

      it("regression: answers a handler that returns no response (undefined, null) with a 500, and keeps serving", async () => {
        // node: the listener threw (a synchronous handler) or a rejection went unhandled, killing the process.
        onError.mockClear();
        const { send } = await serve(((request: HttpRequest) => {
          if (request.path === "/sync") return undefined;
          if (request.path === "/async") return Promise.resolve(null);
          return json(200, { ok: true });
        }) as unknown as Handler);
        for (const path of ["/sync", "/async"]) {
          const response = await send({ path });
          expect(response.status).toBe(500);
          expect(parsed(response)).toMatchObject({ code: "internal_error" });
        }
        expect(onError).toHaveBeenCalledTimes(2);
        expect(onError.mock.calls.every(([error]) => error instanceof TypeError)).toBe(true);
        expect((await send({ path: "/ok" })).status).toBe(200);
      });

      it("sends no content with a 205, whatever body or Content-Length the handler gives (RFC 9110 §15.3.6)", async () => {
        const { send } = await serve((request) => ({
          status: 205,
          headers: request.path === "/length" ? { "content-length": "7" } : ({} as Record<string, string>),
          body: "ignored",
        }));
        for (const path of ["/plain", "/length", "/after"]) {
          const response = await send({ method: "POST", path, body: "{}" });
          expect(response.status).toBe(205);
          expect(response.body.byteLength).toBe(0);
          // No content: either no Content-Length at all, or one of 0; never the handler's 7.
          expect([undefined, "0"]).toContain(response.headers["content-length"]);
          expect(response.headers["transfer-encoding"]).toBeUndefined();
        }
      });
    });

    describe("client abort", () => {
      it("aborts the request signal when the client goes away", async () => {
        let resolveAborted!: (reason: unknown) => void;
        const aborted = new Promise((resolve) => {
          resolveAborted = resolve;
        });
        let resolveStarted!: () => void;
        const started = new Promise<void>((resolve) => {
          resolveStarted = resolve;
        });
        const { send } = await serve(
          (request: HttpRequest) =>
            new Promise((resolve) => {
              const signal = request.signal;
              expect(signal).toBeDefined();
              signal?.addEventListener("abort", () => {
                resolveAborted(true);
                resolve(empty(204));
              });
              resolveStarted();
            }),
        );
        const controller = new AbortController();
        const pending = send({ path: "/slow", signal: controller.signal }).catch((error: unknown) => error);
        await started;
        controller.abort();
        await expect(aborted).resolves.toBe(true);
        await pending;
      });
    });
  });
}

/** The bytes at `offset..offset+size` of a streamed test body: byte i is `i % 251`. */
export function patternChunk(offset: number, size: number): Uint8Array {
  const chunk = new Uint8Array(size);
  for (let i = 0; i < size; i++) chunk[i] = (offset + i) % 251;
  return chunk;
}
