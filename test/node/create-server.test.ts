import { createServer as createHttpServer, request as httpRequest, type Server } from "node:http";
import { connect } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { json, type ResponseHeaders } from "../../src/http/message";
import { createServer, readRequest, sendResponse } from "../../src/node";
import { closeAll, exchange, listen as listenOn, responses, statusLines } from "./raw-exchange";

const servers: Server[] = [];
afterAll(() => closeAll(servers));
const listen = (server: Server) => listenOn(servers, server);

/** Sends raw header lines, so repeated fields reach the server as sent. */
function rawGet(port: number, headers: [string, string][]): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: "127.0.0.1", port, path: "/", headers: [["host", `127.0.0.1:${port}`], ...headers].flat(), agent: false },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve(body));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("node createServer", () => {
  it("joins repeated request header fields with ', ' (RFC 9110 §5.3)", async () => {
    const port = await listen(createServer((request) => json(200, request.headers)));
    const body = JSON.parse(
      await rawGet(port, [
        ["If-None-Match", '"a"'],
        ["If-None-Match", '"b"'],
        ["X-Thing", "1"],
        ["X-Thing", "2"],
      ]),
    );
    expect(body["if-none-match"]).toBe('"a", "b"');
    expect(body["x-thing"]).toBe("1, 2");
  });

  it("reports the peer address", async () => {
    const port = await listen(createServer((request) => json(200, { address: request.remoteAddress })));
    expect(JSON.parse(await rawGet(port, []))).toStrictEqual({ address: "127.0.0.1" });
  });

  describe("Expect: 100-continue (RFC 9110 §10.1.1)", () => {
    const post = (port: number, length: number) =>
      new Promise<{ status: number; continued: boolean }>((resolve, reject) => {
        let continued = false;
        const req = httpRequest({
          host: "127.0.0.1",
          port,
          method: "POST",
          path: "/",
          agent: false,
          headers: { expect: "100-continue", "content-length": String(length) },
        });
        req.on("continue", () => {
          continued = true;
          req.end(new Uint8Array(length));
        });
        req.on("response", (res) => {
          res.resume();
          res.on("end", () => resolve({ status: res.statusCode ?? 0, continued }));
        });
        req.on("error", reject);
        req.flushHeaders();
      });

    it("answers 413 instead of 100 when the declared body is over the limit, so it is never sent", async () => {
      const port = await listen(createServer(() => json(200, {}), { bodyLimit: 100 }));
      expect(await post(port, 101)).toStrictEqual({ status: 413, continued: false });
    });

    it("regression: answers 501 instead of 100 for a transfer coding it cannot decode, so the body is never sent", async () => {
      const port = await listen(createServer(() => json(200, {}), { limits: { lingerMs: 100 } }));
      const reply = await exchange(
        port,
        "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
      );
      expect(statusLines(reply.received)).toStrictEqual(["HTTP/1.1 501 Not Implemented"]);
      expect(responses(reply.received)[0]?.body).toMatchObject({ code: "unsupported_transfer_coding" });
    });

    it("sends 100 Continue and reads the body when it fits", async () => {
      const port = await listen(
        createServer((request) => json(200, { size: request.body.byteLength }), { bodyLimit: 100 }),
      );
      expect(await post(port, 100)).toStrictEqual({ status: 200, continued: true });
    });
  });
});

describe("regression: the fallback 500 for a header node refused went out as HTTP/1.1 500 OK", () => {
  it("sends the 500's own reason phrase", async () => {
    const errors: unknown[] = [];
    const port = await listen(
      createServer(() => ({ status: 200, headers: { "x-a": "a\r\nb" }, body: "ok" }), {
        onError: (error) => errors.push(error),
      }),
    );
    const raw = await rawExchange(port, "GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
    expect(raw.slice(0, raw.indexOf("\r\n"))).toBe("HTTP/1.1 500 Internal Server Error");
    expect(errors).toHaveLength(1);
  });
});

describe("node readRequest and sendResponse", () => {
  it("compose into a listener of your own", async () => {
    const port = await listen(
      createHttpServer(async (req, res) => {
        const read = await readRequest(req, { bodyLimit: 10 }, res);
        sendResponse(res, read.ok ? json(200, { path: read.request.path }) : read.problem.toResponse());
      }),
    );
    expect(JSON.parse(await rawGet(port, []))).toStrictEqual({ path: "/" });
  });
});

/**
 * Writes `parts` one by one on a raw socket, each after the server has had time to read the one before (so each is a
 * chunk of its own to node's parser), and resolves with everything the server sends until it closes.
 */
function writeInParts(port: number, parts: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", async () => {
      for (const part of parts) {
        if (!socket.writable) return;
        socket.write(part);
        await new Promise((wait) => setTimeout(wait, 30));
      }
    });
    let received = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (received += chunk));
    socket.on("close", () => resolve(received));
    socket.on("error", reject);
  });
}

/** `bytes` cut into parts of `size`, as a network delivers a long request in segments. */
const segments = (bytes: string, size: number) =>
  Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.slice(i * size, (i + 1) * size));

/** Writes `bytes` on a raw socket and resolves with everything the server sends until it closes. */
function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.end(bytes));
    let received = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (received += chunk));
    socket.on("close", () => resolve(received));
    socket.on("error", reject);
  });
}

const statusAndProblem = (raw: string) => {
  const [head = "", body = ""] = raw.split("\r\n\r\n");
  return { statusLine: head.split("\r\n")[0], head: head.toLowerCase(), problem: JSON.parse(body) };
};

describe("requests node's parser refuses (clientError)", () => {
  it("answers an invalid method token with a 400 problem document (RFC 9112 §2.2)", async () => {
    let calls = 0;
    const port = await listen(
      createServer(() => {
        calls++;
        return json(200, {});
      }),
    );
    const { statusLine, head, problem } = statusAndProblem(
      await rawExchange(port, "G@T / HTTP/1.1\r\nhost: x\r\n\r\n"),
    );
    expect(statusLine).toBe("HTTP/1.1 400 Bad Request");
    expect(head).toContain("content-type: application/problem+json");
    expect(head).toContain("connection: close");
    expect(problem).toMatchObject({ status: 400, code: "malformed_request" });
    expect(calls).toBe(0);
  });

  // RFC 9110 §9.1: an unrecognized method SHOULD get 501; node's parser knows a fixed set, so no handler behind
  // createServer implements another for any resource (§15.6.2). Before, these got the 400 of a malformed request.
  it.each([
    ["an extension method", "FOO / HTTP/1.1\r\nhost: x\r\n\r\n"],
    ["a method longer than any implemented (RFC 9112 §3.1)", `${"X".repeat(300)} / HTTP/1.1\r\nhost: x\r\n\r\n`],
    ["a lower-case spelling of a method (methods are case-sensitive)", "get / HTTP/1.1\r\nhost: x\r\n\r\n"],
    [
      "a method after a whole request (pipelined)",
      "GET / HTTP/1.1\r\nhost: x\r\n\r\nBREW /pot HTTP/1.1\r\nhost: x\r\n\r\n",
    ],
  ])("answers %s node's parser does not know with 501 method_not_implemented, unserved", async (_, bytes) => {
    let calls = 0;
    const port = await listen(
      createServer(() => {
        calls++;
        return json(200, {});
      }),
    );
    const last = responses(await rawExchange(port, bytes)).at(-1);
    expect(last?.statusLine).toBe("HTTP/1.1 501 Not Implemented");
    expect(last?.head).toContain("connection: close");
    expect(last?.body).toMatchObject({ status: 501, code: "method_not_implemented" });
    expect(calls).toBe(bytes.startsWith("GET") ? 1 : 0);
  });

  // RFC 9112 §6.3 (5): differing values frame no body, and a server MUST answer 400; RFC 9110 §8.6 lets it refuse
  // identical repeated ones too, which node's parser does (a lenient reading is how requests get smuggled).
  it.each([
    ["in two spellings, equal", "Content-Length: 5\r\ncontent-length: 5"],
    ["in two spellings, differing", "Content-Length: 5\r\ncontent-length: 6"],
    ["as one list of differing values", "Content-Length: 6, 5"],
    ["as one list of equal values", "Content-Length: 5, 5"],
  ])("answers a Content-Length repeated %s with 400 malformed_request, unserved", async (_, fields) => {
    let calls = 0;
    const port = await listen(
      createServer(() => {
        calls++;
        return json(200, {});
      }),
    );
    const raw = await rawExchange(port, `POST / HTTP/1.1\r\nhost: x\r\n${fields}\r\n\r\nhello!`);
    const { statusLine, problem } = statusAndProblem(raw);
    expect(statusLine).toBe("HTTP/1.1 400 Bad Request");
    expect(problem).toMatchObject({ status: 400, code: "malformed_request" });
    expect(calls).toBe(0);
  });

  it("answers an oversized header section with 431 (RFC 6585 §5)", async () => {
    const port = await listen(createServer(() => json(200, {})));
    const raw = await rawExchange(port, `GET / HTTP/1.1\r\nhost: x\r\nx-big: ${"a".repeat(20_000)}\r\n\r\n`);
    const { statusLine, problem } = statusAndProblem(raw);
    expect(statusLine).toBe("HTTP/1.1 431 Request Header Fields Too Large");
    expect(problem).toMatchObject({ status: 431, code: "headers_too_large" });
  });

  describe("regression: a request-target over node's header limit got 431, not 414 (RFC 9112 §3, RFC 9110 §15.5.15)", () => {
    const long = "a".repeat(20_000);
    // The answer to the last request: a request before it on the connection gets its 200 first.
    const statusOf = async (parts: string[]) => {
      const port = await listen(createServer(() => json(200, {})));
      const last = responses(await writeInParts(port, parts)).at(-1);
      return { statusLine: last?.statusLine, problem: last?.body };
    };

    it.each([
      ["in one write", [`GET /${long} HTTP/1.1\r\nhost: x\r\n\r\n`]],
      ["after empty lines (RFC 9112 §2.2)", [`\r\n\r\nGET /${long} HTTP/1.1\r\nhost: x\r\n\r\n`]],
      [
        "on a kept-alive connection, the request line starting in the last write",
        ["GET / HTTP/1.1\r\nhost: x\r\n\r\n", `GET /${long}`],
      ],
      [
        "in several writes, the target ending in the one that overflows",
        ["GET /", "a".repeat(6_000), "a".repeat(6_000), `${"a".repeat(8_000)} HTTP/1.1\r\nhost: x\r\n\r\n`],
      ],
      [
        "in several writes, the target ending just before the version",
        ["GET /", "a".repeat(10_000), `${"a".repeat(10_000)} `],
      ],
      [
        "in several writes, the one that overflows wholly inside the target",
        ["GET /", "a".repeat(8_000), "b".repeat(8_000), "c".repeat(8_000), " HTTP/1.1\r\nhost: x\r\n\r\n"],
      ],
      [
        "in TCP segments of 1460 bytes",
        segments(`GET /search?q=${"a%20b".repeat(4_000)} HTTP/1.1\r\nhost: x\r\n\r\n`, 1460),
      ],
    ])("answers 414 to a long target %s", async (_, parts) => {
      const { statusLine, problem } = await statusOf(parts);
      expect(statusLine).toBe("HTTP/1.1 414 URI Too Long");
      expect(problem).toMatchObject({ status: 414, code: "uri_too_long" });
    });

    it.each([
      ["a long field value", [`GET /${"a".repeat(100)} HTTP/1.1\r\nhost: x\r\nx-big: ${long}\r\n\r\n`]],
      [
        "a long field value with spaces, in several writes",
        ["GET / HTTP/1.1\r\nx-a: ", "a ".repeat(5_000), "b ".repeat(4_000)],
      ],
      [
        "a long field value ending in spaces",
        ["GET / HTTP/1.1\r\nx-a: ", "a".repeat(10_000), `${"a".repeat(7_000)}   \r\n\r\n`],
      ],
      [
        "a long field value in several writes, the one that overflows holding what no target has",
        ["GET / HTTP/1.1\r\nx-a: ", "a".repeat(10_000), '"'.repeat(8_000), "a".repeat(8_000), "\r\n\r\n"],
      ],
      ["a long field name", [`GET / HTTP/1.1\r\nhost: x\r\n${long}: 1\r\n\r\n`]],
      ["many fields", [`GET / HTTP/1.1\r\n${"x-f: vvvvvvvvvvvvvvvvvvvv\r\n".repeat(800)}\r\n`]],
    ])("keeps 431 for %s", async (_, parts) => {
      const { statusLine, problem } = await statusOf(parts);
      expect(statusLine).toBe("HTTP/1.1 431 Request Header Fields Too Large");
      expect(problem).toMatchObject({ status: 431, code: "headers_too_large" });
    });
  });

  it("regression: a parser error after a response went out (a 413, then a malformed chunk) got a second response on the same connection", async () => {
    const port = await listen(createServer(() => json(200, {}), { bodyLimit: 4 }));
    const { received, closed } = await exchange(
      port,
      "POST / HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n8\r\n12345678\r\nzz\r\n",
    );
    expect(statusLines(received)).toStrictEqual(["HTTP/1.1 413 Payload Too Large"]);
    expect(closed).toBe(true);
  });

  // RFC 9112 §9.3.2: responses go out in the order of the requests. A request the parser refused after a whole one
  // (pipelined, or bytes past a Content-Length) got its 400 first: the client read it as the first request's answer,
  // and the first request's own response was lost.
  describe("regression: a malformed request after a whole one was answered before it, and the whole one never", () => {
    it.each([
      [
        "bytes past a body's Content-Length, synchronous handler",
        "POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\n\r\nabcGARBAGE\r\n\r\n",
        false,
      ],
      [
        "bytes past a body's Content-Length, asynchronous handler",
        "POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\n\r\nabcGARBAGE\r\n\r\n",
        true,
      ],
      [
        "a pipelined request with a malformed header, synchronous handler",
        "GET / HTTP/1.1\r\nhost: x\r\n\r\nGET / HTTP/1.1\r\nbad header: y\r\n\r\n",
        false,
      ],
      [
        "a pipelined request with a malformed header, asynchronous handler",
        "GET / HTTP/1.1\r\nhost: x\r\n\r\nGET / HTTP/1.1\r\nbad header: y\r\n\r\n",
        true,
      ],
    ])("%s: the first request's response, then the 400, then the close", async (_, bytes, later) => {
      const answer = (body: Uint8Array) => json(200, { body: new TextDecoder().decode(body) });
      const port = await listen(
        createServer((request) =>
          later ? new Promise((resolve) => setImmediate(() => resolve(answer(request.body)))) : answer(request.body),
        ),
      );
      const { received, closed } = await exchange(port, bytes);
      expect(statusLines(received)).toStrictEqual(["HTTP/1.1 200 OK", "HTTP/1.1 400 Bad Request"]);
      expect(responses(received)[1]?.body).toMatchObject({ code: "malformed_request" });
      expect(closed).toBe(true);
    });
  });

  it("keeps serving other connections afterwards", async () => {
    const port = await listen(createServer(() => json(200, { ok: true })));
    await rawExchange(port, "BAD\r\n\r\n");
    expect(JSON.parse(await rawGet(port, []))).toStrictEqual({ ok: true });
  });
});

describe("request targets (RFC 9112 §3.2)", () => {
  const echoTarget = () =>
    createServer((request) => json(200, { path: request.path, search: request.search, host: request.headers.host }));
  const exchange = async (port: number, line: string) => {
    const raw = await rawExchange(port, `${line} HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n`);
    return JSON.parse(raw.slice(raw.indexOf("\r\n\r\n") + 4)) as { path: string; search: string; host: string };
  };
  const targetOf = async (port: number, line: string) => {
    const { path, search } = await exchange(port, line);
    return { path, search };
  };

  it.each([
    ["GET http://localhost/a/b?x=1", { path: "/a/b", search: "x=1" }],
    ["GET http://localhost", { path: "/", search: "" }],
    ["GET http://localhost?x=1", { path: "/", search: "x=1" }],
    ["GET https://localhost:8443/a%2Fb", { path: "/a%2Fb", search: "" }],
  ])(
    "an absolute-form target (%s) gives the path and query of the origin-form, as the Fetch adapter does (§3.2.2)",
    async (line, expected) => {
      const port = await listen(echoTarget());
      expect(await targetOf(port, line)).toStrictEqual(expected);
    },
  );

  it("takes the host of an absolute-form target, not the Host field (§3.2.2: the server MUST ignore it)", async () => {
    const port = await listen(echoTarget());
    expect((await exchange(port, "GET http://api.example:8080/a")).host).toBe("api.example:8080");
    expect((await exchange(port, "GET http://api.example?x=1")).host).toBe("api.example");
    expect((await exchange(port, "GET /a")).host).toBe("localhost");
  });

  it("keeps the origin-form and the asterisk-form of OPTIONS as sent", async () => {
    const port = await listen(echoTarget());
    expect(await targetOf(port, "GET /a/b?x=1")).toStrictEqual({ path: "/a/b", search: "x=1" });
    expect(await targetOf(port, "OPTIONS *")).toStrictEqual({ path: "*", search: "" });
  });
});

describe("Content-Length on the wire (RFC 9112 §6.3: one field)", () => {
  const headOf = async (port: number, path: string) => {
    const raw = await rawExchange(port, `GET ${path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`);
    return raw.slice(0, raw.indexOf("\r\n\r\n")).split("\r\n").slice(1);
  };
  const contentLengths = (lines: string[]) => lines.filter((line) => /^content-length:/i.test(line));

  it("sends the handler's Content-Length once, whatever the case of its name (two went out)", async () => {
    const port = await listen(
      createServer(() => ({
        status: 200,
        headers: { "Content-Type": "text/plain", "Content-Length": "5" },
        body: "hello",
      })),
    );
    expect(contentLengths(await headOf(port, "/"))).toStrictEqual(["Content-Length: 5"]);
  });

  it("sends a 205's Content-Length: 0 in place of the handler's, whatever its case", async () => {
    const port = await listen(createServer(() => ({ status: 205, headers: { "Content-Length": "10" }, body: null })));
    expect(contentLengths(await headOf(port, "/"))).toStrictEqual(["content-length: 0"]);
  });

  // Regression: a response without a body (`empty(201, { location })`, `body: null`) went out chunked, as "0\r\n\r\n",
  // and to an HTTP/1.0 client delimited by closing the connection, where `body: ""` went out with Content-Length: 0.
  describe("regression: a response with a null body went out chunked, not with Content-Length: 0", () => {
    const server = () =>
      createServer((request) => ({
        status: request.path === "/304" ? 304 : 201,
        headers:
          request.path === "/own" ? { "Content-Length": "0", location: "/x" } : ({ location: "/x" } as ResponseHeaders),
        body: null,
      }));

    it("sends Content-Length: 0 and no Transfer-Encoding, on HTTP/1.1", async () => {
      const port = await listen(server());
      const head = await headOf(port, "/");
      expect(contentLengths(head)).toStrictEqual(["content-length: 0"]);
      expect(head.filter((line) => /^transfer-encoding:/i.test(line))).toStrictEqual([]);
      expect(contentLengths(await headOf(port, "/own"))).toStrictEqual(["Content-Length: 0"]);
    });

    it("keeps an HTTP/1.0 keep-alive connection open for the next request", async () => {
      const port = await listen(server());
      const get = "GET / HTTP/1.0\r\nconnection: keep-alive\r\n\r\n";
      const { received } = await exchange(port, `${get}${get.replace("keep-alive", "close")}`);
      expect(statusLines(received)).toStrictEqual(["HTTP/1.1 201 Created", "HTTP/1.1 201 Created"]);
    });

    it("adds none to a 304 or a response to HEAD, where it would be the representation's (RFC 9110 §8.6)", async () => {
      const port = await listen(server());
      expect(contentLengths(await headOf(port, "/304"))).toStrictEqual([]);
      const raw = await rawExchange(port, "HEAD / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
      expect(raw.toLowerCase()).not.toContain("content-length");
    });
  });
});
