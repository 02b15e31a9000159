/**
 * What createServer answers itself, before the handler, for the message rules of RFC 9112 and RFC 9110 that node:http
 * left to a bare status or no answer at all. Raw sockets: fetch and node:http's client cannot send these requests.
 */
import type { Server } from "node:http";
import { connect } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { json } from "../../src/http/message";
import { HTTP_PROBLEM_CODES } from "../../src/http/problem";
import { createServer, type NodeAdapterOptions } from "../../src/node";
import { closeAll, exchange, firstResponse, listen, statusLines } from "./raw-exchange";

const servers: Server[] = [];
afterAll(() => closeAll(servers));

/** A server whose handler records each request it sees and answers 200 with the Host it got. */
async function start(options: NodeAdapterOptions = {}) {
  const seen: string[] = [];
  const server = createServer((request) => {
    seen.push(`${request.method} ${request.path}`);
    return json(200, { host: request.headers.host ?? null });
  }, options);
  return { server, port: await listen(servers, server), seen };
}

/**
 * The refusal every case below expects: one response, a problem document with `status` and `code` (one of
 * HTTP_PROBLEM_CODES), `Connection: close` and the connection closed by the server, the handler never called.
 */
async function expectRefusal(bytes: string, status: number, code: string, options: NodeAdapterOptions = {}) {
  const { port, seen } = await start(options);
  const reply = await exchange(port, bytes);
  expect(statusLines(reply.received)).toHaveLength(1);
  const { status: sent, head, body } = firstResponse(reply.received);
  expect({ sent, body }).toMatchObject({ sent: status, body: { status, code } });
  expect(head).toContain("content-type: application/problem+json");
  expect(head).toContain("connection: close");
  expect(reply.closed).toBe(true);
  expect(seen).toStrictEqual([]);
  expect(HTTP_PROBLEM_CODES).toContain(code);
}

async function served(bytes: string) {
  const { port, seen } = await start();
  const reply = await exchange(port, bytes);
  expect(statusLines(reply.received)).toStrictEqual(["HTTP/1.1 200 OK"]);
  return { seen, body: firstResponse(reply.received).body };
}

describe("Host (RFC 9112 §3.2: a server MUST answer 400 to a missing, repeated or invalid Host)", () => {
  it("regression: an HTTP/1.1 request without Host got node's bare 400 (no body, no Content-Type)", async () => {
    await expectRefusal("GET / HTTP/1.1\r\n\r\n", 400, "invalid_host");
  });

  it.each([
    ["two Host lines (node joined them, 'a, b', and served the request)", "Host: a\r\nHost: b"],
    ["two Host lines, one empty", "Host: a\r\nHost: "],
    ["a Host with a userinfo (RFC 9110 §7.2: uri-host only)", "Host: user@a"],
    ["a Host with a path", "Host: a/b"],
    ["an unclosed IP-literal", "Host: [::1"],
    ["a port above 65535", "Host: a:65536"],
  ])("%s", async (_, fields) => {
    await expectRefusal(`GET / HTTP/1.1\r\n${fields}\r\n\r\n`, 400, "invalid_host");
  });

  it("refuses a repeated Host in HTTP/1.0 too (§3.2: any request message)", async () => {
    await expectRefusal("GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", 400, "invalid_host");
  });

  it("refuses before 100 Continue, so the client never sends the body (closed once lingerMs is over)", async () => {
    await expectRefusal("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n", 400, "invalid_host", {
      limits: { lingerMs: 100 },
    });
  });

  it.each([
    ["an HTTP/1.0 request without Host (HTTP/1.0 has none)", "GET / HTTP/1.0\r\n\r\n", null],
    ["an empty Host (a target URI without authority, RFC 9110 §7.2)", "GET / HTTP/1.1\r\nHost: \r\n\r\n", ""],
    ["an IP-literal with a port", "GET / HTTP/1.1\r\nHost: [::1]:3000\r\n\r\n", "[::1]:3000"],
    ["a registered name with a port", "GET / HTTP/1.1\r\nHost: api.example:8080\r\n\r\n", "api.example:8080"],
  ])("serves %s", async (_, head, host) => {
    const { seen, body } = await served(`${head.slice(0, -2)}Connection: close\r\n\r\n`);
    expect(seen).toStrictEqual(["GET /"]);
    expect(body).toStrictEqual({ host });
  });
});

describe("Expect (RFC 9110 §10.1.1)", () => {
  it("regression: an expectation other than 100-continue got node's bare 417", async () => {
    await expectRefusal(
      "POST / HTTP/1.1\r\nHost: a\r\nExpect: foo\r\nContent-Length: 2\r\n\r\n{}",
      417,
      "expectation_failed",
    );
  });

  it("still sends 100 Continue for 100-continue, then serves the request", async () => {
    const { port, seen } = await start();
    const reply = await exchange(
      port,
      "POST /a HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
    );
    expect(statusLines(reply.received)).toStrictEqual(["HTTP/1.1 100 Continue", "HTTP/1.1 200 OK"]);
    expect(seen).toStrictEqual(["POST /a"]);
  });
});

describe("CONNECT (RFC 9110 §9.3.6; §15.6.2: 501 for a method the server supports for no resource)", () => {
  it.each([
    ["authority-form", "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"],
    ["origin-form", "CONNECT / HTTP/1.1\r\nHost: a\r\n\r\n"],
    [
      "with bytes sent ahead of an answer (a TLS ClientHello)",
      "CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n\x16\x03\x01hello",
    ],
  ])("regression: got no answer at all (node:http destroyed the socket): %s", async (_, bytes) => {
    await expectRefusal(bytes, 501, "method_not_implemented");
  });

  it("closes a connection whose client never closes its side, after limits.lingerMs", async () => {
    const { server, port } = await start({ limits: { lingerMs: 200 } });
    const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    socket.on("error", () => {});
    let received = "";
    socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
    const answered = new Promise((resolve) => socket.once("end", resolve));
    socket.write("CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n");
    await answered;
    expect(statusLines(received)).toStrictEqual(["HTTP/1.1 501 Not Implemented"]);
    const connections = () => new Promise<number>((resolve) => server.getConnections((_, n) => resolve(n)));
    expect(await connections()).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await connections()).toBe(0);
    socket.destroy();
  });

  it("survives clients that reset the connection before the answer, and keeps serving", async () => {
    const { port } = await start();
    const resets = Array.from(
      { length: 20 },
      () =>
        new Promise<void>((resolve) => {
          const socket = connect(port, "127.0.0.1", () => {
            socket.write(`CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n${"x".repeat(200_000)}`);
            socket.resetAndDestroy();
          });
          socket.on("error", () => {});
          socket.on("close", () => resolve());
        }),
    );
    await Promise.all(resets);
    const reply = await exchange(port, "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    expect(statusLines(reply.received)).toStrictEqual(["HTTP/1.1 200 OK"]);
  });
});

describe("Upgrade (RFC 9110 §7.8: a server MAY ignore it)", () => {
  it("serves a request asking to upgrade as a plain one: there is no 'upgrade' listener", async () => {
    const { seen } = await served(
      "GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, close\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n" +
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
    );
    expect(seen).toStrictEqual(["GET /ws"]);
  });
});

describe("HTTP version (RFC 9110 §15.6.6: 505 for a major version the server does not support)", () => {
  it.each([
    ["regression: HTTP/2.0 as text was served as HTTP/1.1", "GET /x HTTP/2.0\r\nHost: a\r\n\r\n"],
    ["HTTP/0.9, as node's parser reads a request line without a version", "GET /x\r\n\r\n"],
  ])("%s", async (_, bytes) => {
    await expectRefusal(bytes, 505, "http_version_not_supported");
  });

  it("leaves other versions to node's parser, which refuses them (400 malformed_request)", async () => {
    await expectRefusal("GET /x HTTP/1.2\r\nHost: a\r\n\r\n", 400, "malformed_request");
    await expectRefusal("GET /x HTTP/3.0\r\nHost: a\r\n\r\n", 400, "malformed_request");
  });

  it("serves HTTP/1.0", async () => {
    const { seen } = await served("GET /x HTTP/1.0\r\nHost: a\r\n\r\n");
    expect(seen).toStrictEqual(["GET /x"]);
  });
});
