// The bytes a response may take beyond its body: interim responses, chunk framing. A consumer that sends such bytes
// without end was read until the attempt's time-out (gigabytes on loopback), whatever `maxResponseBytes` said, since
// only body bytes reach the dispatcher's handler. Raw sockets here: node:http cannot send malformed framing.
import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createDispatcher, type Dispatcher } from "../../../../src/webhooks/delivery/node/dispatcher";
import { RESPONSE_FRAMING_BYTES } from "../../../../src/webhooks/delivery/node/response-meter";
import { type ConnectProxy, startConnectProxy } from "../../../support/connect-proxy";

// What the consumer sends once a request arrives: a first part, then `more` repeated until the client hangs up.
interface Answer {
  first: string;
  more?: string;
}

const ANSWERS: Record<string, Answer> = {
  // RFC 9110 §15.2: a client must read past any number of 1xx responses, each under undici's head cap.
  interim: { first: "", more: "HTTP/1.1 102 Processing\r\n\r\n" },
  // RFC 9112 §7.1.1: chunk-ext is unbounded in the grammar; the recipient ignores it, and so never sees its bytes.
  "chunk-extension": { first: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;", more: "a".repeat(16_384) },
  // RFC 9112 §7.1: chunk-size = 1*HEXDIG, so leading zeros never end either.
  "chunk-size": { first: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", more: "0".repeat(16_384) },
  "early-hints": {
    first: `${"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n".repeat(3)}HTTP/1.1 204 OK\r\n\r\n`,
  },
  small: { first: `HTTP/1.1 200 OK\r\nContent-Length: 900\r\n\r\n${"k".repeat(900)}` },
};

// A consumer on raw sockets: the first request line's path names the answer (every request, keep-alive included).
async function rawConsumer(): Promise<{
  server: Server;
  port: number;
  closed: () => number;
  connections: () => number;
}> {
  let closed = 0;
  let connections = 0;
  const server = createServer((socket: Socket) => {
    connections++;
    socket.on("error", () => undefined);
    socket.on("close", () => closed++);
    socket.on("data", (data: Buffer) => {
      const path = /^POST \/([\w-]+) /.exec(data.toString("latin1"))?.[1];
      const answer = path === undefined ? undefined : ANSWERS[path];
      if (answer === undefined) return;
      socket.write(answer.first);
      const more = answer.more;
      if (more === undefined) return;
      // Writes until the client goes away: only a reader that stops on its own ever ends the exchange.
      const pump = () => {
        while (!socket.destroyed && socket.write(more)) {}
        if (!socket.destroyed) socket.once("drain", pump);
      };
      pump();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port, closed: () => closed, connections: () => connections };
}

describe("the response's bytes beyond its body are capped too (maxResponseBytes + RESPONSE_FRAMING_BYTES)", () => {
  let consumer: Awaited<ReturnType<typeof rawConsumer>>;
  let proxy: ConnectProxy;
  const dispatchers: Dispatcher[] = [];
  // A time-out far beyond the test's own: only the cap can end these exchanges in time.
  const dispatcher = (options: Parameters<typeof createDispatcher>[0] = {}) => {
    const created = createDispatcher({
      urlPolicy: { allowHttp: true, allow: ["127.0.0.1"] },
      resolve: async () => [{ address: "127.0.0.1", family: 4 }],
      timeoutMs: 600_000,
      maxResponseBytes: 1_000,
      ...options,
    });
    dispatchers.push(created);
    return created;
  };
  const send = (target: Dispatcher, answer: keyof typeof ANSWERS) =>
    target.dispatch({ url: `http://127.0.0.1:${consumer.port}/${answer}`, headers: {}, body: "{}" });

  beforeAll(async () => {
    consumer = await rawConsumer();
    proxy = await startConnectProxy();
  });
  afterEach(() => {
    for (const created of dispatchers.splice(0)) created.close();
  });
  afterAll(async () => {
    await proxy.close();
    await new Promise<void>((resolve) => consumer.server.close(() => resolve()));
  });

  it("allows a head of undici's size several times over", () => {
    // undici reads a head of at most 16 KiB (http.maxHeaderSize): a final head and a few 1xx fit.
    expect(RESPONSE_FRAMING_BYTES).toBeGreaterThanOrEqual(4 * 16_384);
  });

  it("an endless run of interim (1xx) responses ends the attempt as response_too_large (no status)", async () => {
    const before = consumer.closed();
    expect(await send(dispatcher(), "interim")).toMatchObject({ kind: "error", errorKind: "response_too_large" });
    await vi.waitFor(() => expect(consumer.closed()).toBe(before + 1));
  });

  it.each([
    ["chunk extensions that never end", "chunk-extension"],
    ["a chunk-size line that never ends", "chunk-size"],
  ] as const)("a 2xx with %s is delivered, and reading stops (the socket is closed)", async (_, answer) => {
    const before = consumer.closed();
    expect(await send(dispatcher(), answer)).toMatchObject({ kind: "response", status: 200 });
    await vi.waitFor(() => expect(consumer.closed()).toBe(before + 1));
  });

  it("caps a connection through an egress proxy alike", async () => {
    const before = consumer.closed();
    const result = await send(dispatcher({ proxy: proxy.url }), "interim");
    expect(result).toMatchObject({ kind: "error", errorKind: "response_too_large" });
    expect(proxy.connects.at(-1)?.authority).toBe(`127.0.0.1:${consumer.port}`);
    await vi.waitFor(() => expect(consumer.closed()).toBe(before + 1));
  });

  it("reads past a few interim responses before the answer: the final status decides", async () => {
    expect(await send(dispatcher({ maxResponseBytes: 0 }), "early-hints")).toMatchObject({
      kind: "response",
      status: 204,
    });
  });

  it("counts per response: one keep-alive connection carries responses passing the cap many times", async () => {
    const target = dispatcher();
    const before = consumer.connections();
    // 200 responses of ~1 KB: 3 times maxResponseBytes + RESPONSE_FRAMING_BYTES on one connection.
    for (let i = 0; i < 200; i++) expect(await send(target, "small")).toMatchObject({ status: 200 });
    // undici reuses a connection one event-loop turn after its response ended, so a second one may open; no more.
    expect(consumer.connections() - before).toBeLessThanOrEqual(2);
  });
});
