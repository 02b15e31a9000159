import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkEndpointUrl } from "../../../src/webhooks/delivery/url-policy";
import { createDispatcher, type Resolver } from "../../../src/webhooks/node/delivery/dispatcher";
import { localServer } from "./local-server";

type Local = Awaited<ReturnType<typeof localServer>>;
const request = (url: string) => ({ url, headers: { "content-type": "application/json" }, body: "{}" });

// No real DNS: test names resolve to what the case says.
function resolver(table: Record<string, string[]>): Resolver {
  return async (hostname) => {
    const addresses = table[hostname];
    if (addresses === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
}

describe("dispatcher", () => {
  let server: Local;
  beforeAll(async () => {
    server = await localServer((req, res) => {
      const path = req.headers["x-case"];
      if (path === "redirect") return res.writeHead(302, { location: "http://127.0.0.1/elsewhere" }).end();
      if (path === "busy") return res.writeHead(429, { "retry-after": "7" }).end("slow down");
      if (path === "big") return res.end("x".repeat(100_000));
      if (path === "hang") return;
      if (path === "reset") return res.socket?.destroy();
      res.end("thanks");
    });
  });
  afterAll(() => server.close());

  const allowLocal = { urlPolicy: { allowHttp: true, allow: ["127.0.0.1"] } };
  const send = (dispatcher: ReturnType<typeof createDispatcher>, kase: string) =>
    dispatcher.dispatch({ url: server.url, headers: { "x-case": kase }, body: "{}" });

  describe("SSRF at send time (after DNS)", () => {
    it.each([
      ["loopback", "127.0.0.1"],
      ["loopback v6", "::1"],
      ["private", "10.0.0.1"],
      ["private 192.168", "192.168.0.1"],
      ["link-local (cloud metadata)", "169.254.169.254"],
      ["CGNAT", "100.64.0.1"],
      ["multicast", "224.0.0.1"],
      ["unspecified", "0.0.0.0"],
      ["unique-local v6", "fd00::1"],
      ["mapped v6", "::ffff:127.0.0.1"],
      ["link-local v6", "fe80::1"],
    ])("a name resolving to %s (%s) is refused before connecting", async (_kind, address) => {
      const before = server.received.length;
      const dispatcher = createDispatcher({
        urlPolicy: { allowHttp: true },
        resolve: resolver({ "evil.test": [address] }),
      });
      // Registration accepts the name: it is only known to be bad after resolution.
      expect(checkEndpointUrl(`http://evil.test:${server.port}/hooks`, { allowHttp: true }).ok).toBe(true);
      const result = await dispatcher.dispatch(request(`http://evil.test:${server.port}/hooks`));
      expect(result).toMatchObject({ kind: "error", errorKind: "ssrf_blocked" });
      expect(server.received.length).toBe(before);
      dispatcher.close();
    });

    it("one forbidden address among several refuses the name (no partial trust)", async () => {
      const dispatcher = createDispatcher({
        urlPolicy: { allowHttp: true },
        resolve: resolver({ "mixed.test": ["93.184.216.34", "127.0.0.1"] }),
      });
      const result = await dispatcher.dispatch(request(`http://mixed.test:${server.port}/hooks`));
      expect(result).toMatchObject({ kind: "error", errorKind: "ssrf_blocked" });
      dispatcher.close();
    });

    it("an IP literal is refused without lookup", async () => {
      const dispatcher = createDispatcher({ urlPolicy: { allowHttp: true } });
      expect(await dispatcher.dispatch(request(server.url))).toMatchObject({ errorKind: "ssrf_blocked" });
      expect(await dispatcher.dispatch(request(`http://[::1]:${server.port}/`))).toMatchObject({
        errorKind: "ssrf_blocked",
      });
      dispatcher.close();
    });

    it("plain http is refused unless allowed", async () => {
      const dispatcher = createDispatcher({ urlPolicy: { allow: ["127.0.0.1"] } });
      expect(await dispatcher.dispatch(request(server.url))).toMatchObject({ errorKind: "ssrf_blocked" });
      dispatcher.close();
    });

    it("the allow-list lets a test name reach loopback", async () => {
      const dispatcher = createDispatcher({ ...allowLocal, resolve: resolver({ "good.test": ["127.0.0.1"] }) });
      const result = await dispatcher.dispatch(request(`http://good.test:${server.port}/hooks`));
      expect(result).toMatchObject({ kind: "response", status: 200, body: "thanks" });
      dispatcher.close();
    });

    it("an unknown name is a dns error", async () => {
      const dispatcher = createDispatcher({ ...allowLocal, resolve: resolver({}) });
      expect(await dispatcher.dispatch(request("http://nowhere.test/"))).toMatchObject({ errorKind: "dns" });
      dispatcher.close();
    });
  });

  describe("outcomes", () => {
    const dispatcher = createDispatcher({
      ...allowLocal,
      timeoutMs: 150,
      maxResponseBytes: 1_000,
      logResponseBytes: 10,
    });
    afterAll(() => dispatcher.close());

    it("keeps the connection alive across attempts", async () => {
      const before = server.connections();
      for (let i = 0; i < 5; i++) expect(await send(dispatcher, "ok")).toMatchObject({ status: 200 });
      expect(server.connections() - before).toBeLessThanOrEqual(1);
    });

    it("does not follow redirects", async () => {
      expect(await send(dispatcher, "redirect")).toMatchObject({ kind: "response", status: 302 });
    });

    it("reads Retry-After", async () => {
      expect(await send(dispatcher, "busy")).toMatchObject({ status: 429, retryAfterMs: 7_000, body: "slow down" });
    });

    it("stops reading past the byte cap", async () => {
      expect(await send(dispatcher, "big")).toMatchObject({
        kind: "error",
        errorKind: "response_too_large",
        status: 200,
      });
    });

    it("times out a consumer that hangs", async () => {
      expect(await send(dispatcher, "hang")).toMatchObject({ kind: "error", errorKind: "timeout" });
    });

    it("times out every hanging request, each after its own time-out, while others complete", async () => {
      const first = send(dispatcher, "hang");
      await new Promise((resolve) => setTimeout(resolve, 60));
      const second = send(dispatcher, "hang");
      expect(await send(dispatcher, "ok")).toMatchObject({ status: 200 });
      const [a, b] = await Promise.all([first, second]);
      expect(a).toMatchObject({ kind: "error", errorKind: "timeout" });
      expect(b).toMatchObject({ kind: "error", errorKind: "timeout" });
      // One timer serves both: the later request is not cut short when the earlier one times out.
      expect(b.durationMs).toBeGreaterThanOrEqual(140);
    });

    it("reports a reset connection", async () => {
      expect(await send(dispatcher, "reset")).toMatchObject({ kind: "error", errorKind: "connection_reset" });
    });

    it("reports a refused connection (server down)", async () => {
      const probe = createServer();
      const port = await new Promise<number>((resolve) =>
        probe.listen(0, "127.0.0.1", () => resolve((probe.address() as { port: number }).port)),
      );
      await new Promise((resolve) => probe.close(resolve));
      const result = await dispatcher.dispatch(request(`http://127.0.0.1:${port}/`));
      expect(result).toMatchObject({ kind: "error", errorKind: "connection_refused" });
    });
  });
});
