/** `listen --forward-to` as a gateway (RFC 9110 §7.6): end-to-end fields only, redirects reported, not followed. */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { endToEnd, forward } from "../../src/cli/forward";
import type { HttpRequest } from "../../src/http/message";

describe("endToEnd() (RFC 9110 §7.6.1)", () => {
  it("drops the hop-by-hop fields and those Connection names (regression: TE, Proxy-Connection forwarded)", () => {
    const kept = endToEnd({
      connection: "keep-alive, X-Trace",
      "x-trace": "hop",
      "proxy-connection": "keep-alive",
      te: "trailers",
      "keep-alive": "timeout=5",
      "transfer-encoding": "chunked",
      upgrade: "h2c",
      host: "127.0.0.1",
      "content-length": "2",
      expect: "100-continue",
      "webhook-id": "msg_1",
      "webhook-signature": "v1,abc",
      "content-type": "application/json",
    });
    expect(kept).toEqual({ "webhook-id": "msg_1", "webhook-signature": "v1,abc", "content-type": "application/json" });
  });
});

describe("forward()", () => {
  const received: { method: string; url: string; headers: IncomingHttpHeaders }[] = [];
  let base: string;
  const server = createServer((req, res) => {
    received.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    req.resume();
    req.on("end", () => {
      if (req.url === "/moved") res.writeHead(302, { location: "/elsewhere" }).end("moved");
      else res.writeHead(204).end();
    });
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.close();
    server.closeAllConnections();
  });

  const delivery = (headers: Record<string, string>): HttpRequest => ({
    method: "POST",
    path: "/hooks",
    search: "",
    query: {},
    headers,
    body: new TextEncoder().encode("{}"),
  });

  it("answers with a redirect's status and does not follow it (regression: the POST became a GET)", async () => {
    received.length = 0;
    const answer = await forward(`${base}/moved`, delivery({ "webhook-id": "msg_1" }));
    expect(answer.status).toBe(302);
    expect(answer.location).toBe("/elsewhere");
    expect(received.map((r) => `${r.method} ${r.url}`)).toEqual(["POST /moved"]);
  });

  it("sends the end-to-end fields and not the hop-by-hop ones", async () => {
    received.length = 0;
    const answer = await forward(
      `${base}/ok`,
      delivery({ "webhook-id": "msg_1", te: "trailers", connection: "x-trace", "x-trace": "1" }),
    );
    expect(answer.status).toBe(204);
    expect(answer.location).toBeUndefined();
    expect(received[0]?.headers["webhook-id"]).toBe("msg_1");
    expect(received[0]?.headers.te).toBeUndefined();
    expect(received[0]?.headers["x-trace"]).toBeUndefined();
  });
});
