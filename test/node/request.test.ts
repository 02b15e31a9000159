import { Agent, createServer as createHttpServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it, vi } from "vitest";
import { bodyConsumed } from "../../src/http/adapter-options";
import { type Handler, json } from "../../src/http/message";
import { adapt, createServer, readRequest, sendResponse } from "../../src/node";
import type { ContractRequest, ContractResponse } from "../http/adapter-contract";
import { send } from "../support/node-client";
import { exchange, firstResponse, listen, statusLines } from "./raw-exchange";

const servers: Server[] = [];
const agents: Agent[] = [];
afterAll(async () => {
  for (const agent of agents) agent.destroy();
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** What the app does with the request before it calls the adapter's listener, then `go` calls it. */
type Before = (req: IncomingMessage, go: () => void) => void;

const drainThen =
  (later: boolean): Before =>
  (req, go) => {
    req.on("data", () => undefined);
    req.on("end", () => (later ? setTimeout(go, 10) : go()));
  };
const readAllInEnd = drainThen(false);
const readAllThenLater = drainThen(true);
const forAwait: Before = (req, go) => {
  void (async () => {
    for await (const _ of req);
    go();
  })();
};
const readPartPaused: Before = (req, go) => {
  req.once("data", () => {
    req.pause();
    setTimeout(go, 10);
  });
};
const readPartFlowing: Before = (req, go) => {
  const first = () => {
    req.off("data", first); // the stream flows on: the rest goes to nobody
    setTimeout(go, 10);
  };
  req.on("data", first);
};
const pausedUnread: Before = (req, go) => {
  req.pause();
  setTimeout(go, 10);
};

/**
 * A server whose own listener runs `before`, then the adapter's on `/hook` (other paths go straight to the adapter).
 * Each exchange gives up after a second: a hang fails the test, never the suite.
 */
async function serve(before: Before) {
  const onError = vi.fn();
  const handler = vi.fn((request: { body: Uint8Array }) => json(200, { bytes: request.body.byteLength }));
  const listener = adapt(handler, { onError });
  const server = createHttpServer((req, res) =>
    req.url === "/hook" ? before(req, () => listener(req, res)) : listener(req, res),
  );
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  // One keep-alive connection: a request left unfinished on it would stall the next one.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  agents.push(agent);
  const exchange = (spec: ContractRequest): Promise<ContractResponse> =>
    send(port, agent, { ...spec, signal: AbortSignal.timeout(1_000) });
  return { exchange, onError, handler };
}

const parsed = (response: ContractResponse) => JSON.parse(response.body.toString()) as unknown;
const post = (body: string, headers: Record<string, string> = {}): ContractRequest => ({
  method: "POST",
  path: "/hook",
  headers,
  body,
});

describe("node adapter: a body read before the listener", () => {
  describe("regression: answered 500 body_consumed with the cause to onError, never left waiting for an 'end' that already fired", () => {
    it.each([
      ["read to its end, the listener called from 'end'", readAllInEnd, post('{"a":1}')],
      ["read to its end, the listener called later", readAllThenLater, post('{"a":1}')],
      ["read with for await", forAwait, post('{"a":1}')],
      ["chunked, read to its end", readAllThenLater, post('{"a":1}', { "transfer-encoding": "chunked" })],
      ["read in part, then paused", readPartPaused, post("x".repeat(200_000))],
      ["read in part, the rest flowing to nobody", readPartFlowing, post("x".repeat(200_000))],
    ])("a body %s", async (_, before, request) => {
      const { exchange, onError, handler } = await serve(before);
      const response = await exchange(request);
      expect(response.status).toBe(500);
      expect(response.headers["content-type"]).toBe("application/problem+json");
      // The document the Fetch adapter sends for the same mistake (one factory).
      expect(parsed(response)).toStrictEqual(bodyConsumed(new TypeError()).toJSON());
      expect(handler).not.toHaveBeenCalled();
      expect(onError).toHaveBeenCalledTimes(1);
      const [error, seen] = onError.mock.calls[0] as [unknown, { path: string; body: Uint8Array }];
      expect(error).toBeInstanceOf(TypeError);
      expect(seen.path).toBe("/hook");
      expect(seen.body.byteLength).toBe(0);
      // RFC 9112 §9.3: what was left of the body is read off, so the connection serves its next request.
      expect(parsed(await exchange({ method: "POST", path: "/next", body: "abc" }))).toStrictEqual({ bytes: 3 });
    });
  });

  describe("a request with no body bytes is served, whoever drained it first (RFC 9112 §6.3)", () => {
    it.each([
      ["GET", { method: "GET", path: "/hook" }],
      ["POST with Content-Length: 0", post("", { "content-length": "0" })],
      ["POST with an empty chunked body", post("", { "transfer-encoding": "chunked" })],
    ])("%s, drained before the listener", async (_, request) => {
      const { exchange, onError } = await serve(readAllThenLater);
      const response = await exchange(request as ContractRequest);
      expect(response.status).toBe(200);
      expect(parsed(response)).toStrictEqual({ bytes: 0 });
      expect(onError).not.toHaveBeenCalled();
    });

    it.each([
      ["GET", { method: "GET", path: "/hook" }],
      ["POST with Content-Length: 0", post("", { "content-length": "0" })],
    ])("%s, untouched, called later", async (_, request) => {
      const { exchange } = await serve((_req, go) => setTimeout(go, 10));
      expect(parsed(await exchange(request as ContractRequest))).toStrictEqual({ bytes: 0 });
    });
  });

  it("regression: reads a body paused before the listener but never read (a 'data' listener alone does not resume it)", async () => {
    const { exchange, onError } = await serve(pausedUnread);
    expect(parsed(await exchange(post("hello")))).toStrictEqual({ bytes: 5 });
    expect(onError).not.toHaveBeenCalled();
  });

  it("readRequest gives the same problem, with the cause", async () => {
    let cause: unknown;
    const server = createHttpServer((req, res) =>
      readAllThenLater(req, async () => {
        const read = await readRequest(req, {}, res);
        if (!read.ok) cause = read.problem.cause;
        sendResponse(res, read.ok ? json(200, {}) : read.problem.toResponse());
      }),
    );
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const agent = new Agent();
    agents.push(agent);
    const { port } = server.address() as AddressInfo;
    const response = await send(port, agent, { ...post("{}"), signal: AbortSignal.timeout(1_000) });
    expect(response.status).toBe(500);
    expect(parsed(response)).toMatchObject({ code: "body_consumed" });
    expect(cause).toBeInstanceOf(TypeError);
  });
});

describe("what the adapter refuses of the message itself, on node's own server and on createServer", () => {
  /** The same handler behind `adapt` on a bare node:http server, behind `createServer`, and behind `readRequest`. */
  const variants = {
    adapt: (handler: Handler) => createHttpServer(adapt(handler)),
    createServer: (handler: Handler) => createServer(handler),
    readRequest: (handler: Handler) =>
      createHttpServer(async (req, res) => {
        const read = await readRequest(req, {}, res);
        sendResponse(res, read.ok ? await handler(read.request) : read.problem.toResponse());
      }),
  };
  const start = async (variant: keyof typeof variants) => {
    const seen: string[] = [];
    const server = variants[variant]((request) => {
      seen.push(`${request.method} ${request.path}`);
      return json(200, { body: new TextDecoder().decode(request.body) });
    });
    return { port: await listen(servers, server), seen };
  };

  describe.each(Object.keys(variants) as (keyof typeof variants)[])("%s", (variant) => {
    describe("transfer codings (RFC 9112 §6.1: 501 for one the server does not understand)", () => {
      it.each([
        ["regression: gzip, chunked handed the handler the still-gzipped bytes", "gzip, chunked"],
        ["one coding per field line", "gzip\r\nTransfer-Encoding: chunked"],
        ["identity (no longer a transfer coding, RFC 9112 §7)", "identity, chunked"],
      ])("%s", async (_, codings) => {
        const { port, seen } = await start(variant);
        const reply = await exchange(
          port,
          `POST /a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ${codings}\r\n\r\n3\r\nabc\r\n0\r\n\r\n`,
        );
        expect(statusLines(reply.received)).toHaveLength(1);
        const { status, head, body } = firstResponse(reply.received);
        expect({ status, body }).toMatchObject({ status: 501, body: { code: "unsupported_transfer_coding" } });
        expect(head).toContain("connection: close");
        expect(reply.closed).toBe(true);
        expect(seen).toStrictEqual([]);
      });

      it.each([
        ["chunked", "chunked"],
        ["chunked in capitals", "CHUNKED"],
        ["chunked after an empty list element (RFC 9110 §5.6.1)", ", chunked"],
      ])("reads the body of %s", async (_, codings) => {
        const { port, seen } = await start(variant);
        const reply = await exchange(
          port,
          `POST /a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ${codings}\r\nConnection: close\r\n\r\n3\r\nabc\r\n0\r\n\r\n`,
        );
        expect(firstResponse(reply.received)).toMatchObject({ status: 200, body: { body: "abc" } });
        expect(seen).toStrictEqual(["POST /a"]);
      });
    });

    describe("absolute-form targets (RFC 9112 §3.2.2; RFC 3986 §3.2: the authority)", () => {
      it.each([
        ["regression: an unclosed IP-literal was routed to /orders", "http://[::1/orders"],
        ["regression: a port above 65535 was routed to /orders", "https://x:99999/orders"],
        ["a malformed percent-encoding in the host", "http://%zz/orders"],
        ["an IPv6 address of nine pieces", "http://[1:2:3:4:5:6:7:8:9]/orders"],
        // RFC 9110 §4.2.1: an http URI with an empty host MUST be rejected; it was served by its path, under Host.
        ["regression: an empty host was served as /orders", "http:///orders"],
        ["regression: an empty host with a port was served as /orders", "https://:443/orders"],
        ["regression: an empty host after a userinfo was served as /orders", "http://u@/orders"],
        // RFC 9110 §4.2.4: a recipient SHOULD treat a userinfo in an http(s) URI as an error (it hides the host).
        ["regression: a userinfo was dropped and the request served", "http://user:pass@a/orders"],
        ["regression: an empty userinfo was dropped and the request served", "https://@a/orders"],
        ['a userinfo with an "@" in it', "http://a@b@c/orders"],
      ])("%s: 400 bad_request_target", async (_, target) => {
        const { port, seen } = await start(variant);
        const reply = await exchange(port, `GET ${target} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`);
        expect(statusLines(reply.received)).toHaveLength(1);
        const { status, body } = firstResponse(reply.received);
        expect({ status, body }).toMatchObject({ status: 400, body: { code: "bad_request_target" } });
        expect(seen).toStrictEqual([]);
      });

      // Regression: a target of another scheme was served by its path alone (`ftp://b/orders` as `/orders`).
      it.each([
        ["ftp", "ftp://b/orders"],
        ["ws", "ws://b/orders"],
      ])("a target of another scheme than http(s), %s: 400 bad_request_target", async (_, target) => {
        const { port, seen } = await start(variant);
        const reply = await exchange(port, `GET ${target} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`);
        const { status, body } = firstResponse(reply.received);
        expect({ status, body }).toMatchObject({ status: 400, body: { code: "bad_request_target" } });
        expect(seen).toStrictEqual([]);
      });

      it("serves an absolute-form target whose scheme is in capitals (RFC 3986 §3.1)", async () => {
        const { port, seen } = await start(variant);
        const reply = await exchange(port, "GET HTTP://a/orders HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
        expect(firstResponse(reply.received).status).toBe(200);
        expect(seen).toStrictEqual(["GET /orders"]);
      });

      // Regression: `GET *` was served with the path "*"; RFC 9112 §3.2.4 keeps the asterisk-form for OPTIONS.
      it("refuses the asterisk-form for any method but OPTIONS: 400 bad_request_target", async () => {
        const { port, seen } = await start(variant);
        const reply = await exchange(port, "GET * HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
        const { status, body } = firstResponse(reply.received);
        expect({ status, body }).toMatchObject({ status: 400, body: { code: "bad_request_target" } });
        expect((body as { detail: string }).detail).toMatch(/only for OPTIONS/);
        expect(seen).toStrictEqual([]);
      });

      it("keeps the connection: the next request on it is served", async () => {
        const { port, seen } = await start(variant);
        const reply = await exchange(
          port,
          "GET http://[::1/orders HTTP/1.1\r\nHost: a\r\n\r\nGET http://[::1]:8080/orders HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
        );
        expect(statusLines(reply.received)).toStrictEqual(["HTTP/1.1 400 Bad Request", "HTTP/1.1 200 OK"]);
        expect(seen).toStrictEqual(["GET /orders"]);
      });
    });
  });
});
