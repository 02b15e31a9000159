// The dispatcher through an egress proxy: a real HTTP CONNECT proxy on loopback (node:http's `connect` event), a
// consumer behind it, and an injected resolver, so the names are the test's and the proxy is seen to receive only
// the addresses the URL policy let through.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer as createHttpsServer } from "node:https";
import { type AddressInfo, createServer as createNetServer } from "node:net";
import { createSecureContext, createServer as createTlsServer } from "node:tls";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createDispatcher, type Dispatcher } from "../../../../src/webhooks/delivery/node/dispatcher";
import type { HostResolver } from "../../../../src/webhooks/delivery/url-policy";
import { type ConnectProxy, startConnectProxy } from "../../../support/connect-proxy";
import { localServer } from "./local-server";

type Local = Awaited<ReturnType<typeof localServer>>;

// No real DNS: the consumer's name resolves to loopback, a second name to a private address the policy forbids.
const resolve: HostResolver = async (hostname) => {
  const table: Record<string, string> = { "consumer.test": "127.0.0.1", "intranet.test": "10.0.0.7" };
  const address = table[hostname];
  if (address === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
  return [{ address, family: 4 }];
};

const request = (url: string) => ({ url, headers: { "content-type": "application/json" }, body: '{"id":"evt_1"}' });
const allowLocal = { allowHttp: true, allow: ["127.0.0.1"] };

describe("dispatcher through an egress proxy", () => {
  let consumer: Local;
  let proxy: ConnectProxy;
  const dispatchers: Dispatcher[] = [];
  const dispatcher = (options: Parameters<typeof createDispatcher>[0] = {}) => {
    const created = createDispatcher({
      urlPolicy: allowLocal,
      resolve,
      proxy: proxy.url,
      timeoutMs: 2_000,
      ...options,
    });
    dispatchers.push(created);
    return created;
  };

  beforeAll(async () => {
    consumer = await localServer();
    proxy = await startConnectProxy();
  });
  afterEach(() => {
    for (const created of dispatchers.splice(0)) created.close();
    proxy.connects.length = 0;
    proxy.mode = "tunnel";
  });
  afterAll(async () => {
    await consumer.close();
    await proxy.close();
  });

  it("delivers through a tunnel to the address it resolved and checked: the proxy never sees the name", async () => {
    const before = consumer.received.length;
    const result = await dispatcher().dispatch(request(`http://consumer.test:${consumer.port}/hooks`));
    expect(result).toMatchObject({ kind: "response", status: 200, body: "ok" });
    expect(proxy.connects).toEqual([{ authority: `127.0.0.1:${consumer.port}`, authorization: undefined }]);
    const received = consumer.received[before];
    expect(received?.body).toBe('{"id":"evt_1"}');
    // RFC 9112 §3.2: the consumer still sees its own name.
    expect(received?.headers.host).toBe(`consumer.test:${consumer.port}`);
  });

  // Regression: past 2^31 - 1 ms a Node timer fires after 1 ms, so the tunnel's time-out failed every attempt at once.
  it("delivers with a time-out longer than a timer can wait (over 24.8 days)", async () => {
    const result = await dispatcher({ timeoutMs: 3e9 }).dispatch(
      request(`http://consumer.test:${consumer.port}/hooks`),
    );
    expect(result).toMatchObject({ kind: "response", status: 200 });
  });

  it("keeps tunnels alive between attempts, as direct connections", async () => {
    const send = dispatcher();
    for (let i = 0; i < 20; i++) {
      expect(await send.dispatch(request(`http://consumer.test:${consumer.port}/hooks`))).toMatchObject({
        status: 200,
      });
    }
    // As without a proxy (dispatcher.test.ts): undici reuses a connection one event-loop turn after its response
    // ended, so an attempt sent at once opens a second one; no more are opened.
    expect(proxy.connects.length).toBeLessThanOrEqual(2);
  });

  it("sends the URL's credentials as Proxy-Authorization, and never names them in a failure", async () => {
    const url = `http://hook%40user:s3cr%3At@127.0.0.1:${proxy.port}`;
    const send = dispatcher({ proxy: url });
    expect(await send.dispatch(request(`http://consumer.test:${consumer.port}/hooks`))).toMatchObject({ status: 200 });
    expect(proxy.connects[0]?.authorization).toBe(`Basic ${Buffer.from("hook@user:s3cr:t").toString("base64")}`);
    proxy.mode = "refuse";
    const refused = await dispatcher({ proxy: url }).dispatch(request(`http://consumer.test:${consumer.port}/hooks`));
    expect(refused).toMatchObject({ kind: "error", errorKind: "proxy" });
    expect(JSON.stringify(refused)).not.toMatch(/s3cr|hook%40user|hook@user/);
  });

  it("refuses a name that resolves to a forbidden address before asking the proxy for anything", async () => {
    const result = await dispatcher({ urlPolicy: { allowHttp: true } }).dispatch(
      request(`http://intranet.test:${consumer.port}/hooks`),
    );
    expect(result).toMatchObject({ kind: "error", errorKind: "ssrf_blocked" });
    expect(proxy.connects).toEqual([]);
  });

  it("refuses a forbidden IP literal without the proxy", async () => {
    const result = await dispatcher({ urlPolicy: { allowHttp: true } }).dispatch(request("http://10.0.0.7/hooks"));
    expect(result).toMatchObject({ kind: "error", errorKind: "url_refused" });
    expect(proxy.connects).toEqual([]);
  });

  it.each([
    ["refuses the tunnel", "refuse", /refused a tunnel to 127\.0\.0\.1:\d+: 403 Forbidden/],
    ["answers without an HTTP status line", "garbage", /no HTTP status line/],
  ] as const)("logs an attempt whose proxy %s as the proxy's failure", async (_, mode, message) => {
    proxy.mode = mode;
    const result = await dispatcher().dispatch(request(`http://consumer.test:${consumer.port}/hooks`));
    expect(result).toMatchObject({ kind: "error", errorKind: "proxy" });
    expect(result.kind === "error" && result.message).toMatch(message);
  });

  it("logs an unreachable proxy as the proxy's failure, naming it", async () => {
    const closed = createNetServer();
    await new Promise<void>((done) => closed.listen(0, "127.0.0.1", done));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((done) => closed.close(() => done()));
    const result = await dispatcher({ proxy: `http://127.0.0.1:${port}` }).dispatch(
      request(`http://consumer.test:${consumer.port}/hooks`),
    );
    expect(result).toMatchObject({ kind: "error", errorKind: "proxy" });
    expect(result.kind === "error" && result.message).toContain(`127.0.0.1:${port}`);
  });

  it("times an attempt out when the proxy never answers CONNECT", async () => {
    proxy.mode = "silent";
    const result = await dispatcher({ timeoutMs: 300 }).dispatch(
      request(`http://consumer.test:${consumer.port}/hooks`),
    );
    expect(result).toMatchObject({ kind: "error", errorKind: "timeout" });
  });

  it("refuses a proxy option it cannot use at construction, naming it", () => {
    expect(() => createDispatcher({ proxy: "socks5://127.0.0.1:1080" })).toThrow(/createDispatcher: proxy/);
    expect(() => createDispatcher({ proxy: "127.0.0.1:3128" })).toThrow(TypeError);
  });

  describe("with TLS", () => {
    // One self-signed certificate for consumer.test, localhost and 127.0.0.1 (valid until 2126, made with openssl req
    // -x509 -newkey ec) serves the endpoint and the proxy.
    const fixture = (name: string) => fileURLToPath(new URL(`./proxy/${name}`, import.meta.url));
    const identity = { key: readFileSync(fixture("key.pem")), cert: readFileSync(fixture("cert.pem")) };

    it("runs TLS end to end over the tunnel, with the endpoint's name as SNI and for its certificate", async () => {
      // The names the endpoint's ClientHellos carried (RFC 6066 §3).
      const sni: string[] = [];
      const context = createSecureContext(identity);
      const endpoint = createTlsServer({
        ...identity,
        SNICallback: (servername, done) => {
          sni.push(servername);
          done(null, context);
        },
      });
      endpoint.on("secureConnection", (socket) => socket.destroy());
      endpoint.on("tlsClientError", () => undefined);
      await new Promise<void>((done) => endpoint.listen(0, "127.0.0.1", done));
      const port = (endpoint.address() as AddressInfo).port;
      try {
        const result = await dispatcher({ urlPolicy: { allow: ["127.0.0.1"] } }).dispatch(
          request(`https://consumer.test:${port}/hooks`),
        );
        expect(proxy.connects).toEqual([{ authority: `127.0.0.1:${port}`, authorization: undefined }]);
        // The ClientHello reached the endpoint through the proxy and named the endpoint.
        expect(sni).toEqual(["consumer.test"]);
        // This process trusts no such certificate: verification is on, over the tunnel as without one.
        expect(result).toMatchObject({ kind: "error", errorKind: "tls" });
      } finally {
        await new Promise<void>((done) => endpoint.close(() => done()));
      }
    });

    it.each([
      ["an http:// proxy", "http"],
      ["an https:// proxy (TLS to the proxy, then TLS to the endpoint inside it)", "https"],
    ] as const)("delivers to an https:// endpoint the process trusts, through %s", async (_, scheme) => {
      const endpoint = createHttpsServer(identity, (req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (chunk: Buffer) => chunks.push(chunk));
        req.on("end", () => res.end(`${req.headers.host} ${Buffer.concat(chunks).toString()}`));
      });
      await new Promise<void>((done) => endpoint.listen(0, "127.0.0.1", done));
      const port = (endpoint.address() as AddressInfo).port;
      const secureProxy = scheme === "https" ? await startConnectProxy(identity) : undefined;
      const via = secureProxy ?? proxy;
      try {
        // Not spawnSync: the proxy and the endpoint answer from this process's event loop.
        const run = await promisify(execFile)(
          process.execPath,
          ["--import", "tsx", fileURLToPath(new URL("./proxy/dispatch-once.ts", import.meta.url))],
          {
            encoding: "utf8",
            timeout: 30_000,
            env: {
              ...process.env,
              NODE_EXTRA_CA_CERTS: fixture("cert.pem"),
              PROXY_URL: scheme === "https" ? `https://127.0.0.1:${via.port}` : via.url,
              TARGET_URL: `https://consumer.test:${port}/hooks`,
            },
          },
        );
        expect(JSON.parse(run.stdout)).toMatchObject({
          kind: "response",
          status: 200,
          body: `consumer.test:${port} {"id":"evt_tls"}`,
        });
        expect(via.connects).toEqual([{ authority: `127.0.0.1:${port}`, authorization: undefined }]);
      } finally {
        await secureProxy?.close();
        await new Promise<void>((done) => endpoint.close(() => done()));
      }
    });
  });
});
