import type { ServerResponse } from "node:http";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createDispatcher, UNREQUESTED_CONTINUE_MESSAGE } from "../../../../src/webhooks/delivery/node/dispatcher";
import { createSystemResolver } from "../../../../src/webhooks/delivery/node/system-resolver";
import type { HostResolver } from "../../../../src/webhooks/delivery/url-policy";
import { checkEndpointUrl, checkResolvedEndpointUrl } from "../../../../src/webhooks/delivery/url-policy";
import { localServer } from "./local-server";

type Local = Awaited<ReturnType<typeof localServer>>;
const request = (url: string) => ({ url, headers: { "content-type": "application/json" }, body: "{}" });

// No real DNS: test names resolve to what the case says.
function resolver(table: Record<string, string[]>): HostResolver {
  return async (hostname) => {
    const addresses = table[hostname];
    if (addresses === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
}

// Writes until the client goes away: only a reader that stops on its own ever ends the exchange.
function endless(res: ServerResponse): void {
  res.writeHead(200);
  const chunk = "z".repeat(16_384);
  const more = () => {
    while (!res.destroyed && res.write(chunk)) {}
    if (!res.destroyed) res.once("drain", more);
  };
  res.on("close", () => closedEarly.push(!res.writableFinished));
  more();
}
const closedEarly: boolean[] = [];
const TIMEOUT_MS = 1_000;

describe("dispatcher", () => {
  let server: Local;
  beforeAll(async () => {
    server = await localServer((req, res) => {
      const path = req.headers["x-case"];
      if (path === "redirect") return res.writeHead(302, { location: "http://127.0.0.1/elsewhere" }).end();
      if (path === "busy") return res.writeHead(429, { "retry-after": "7" }).end("slow down");
      if (path === "big") return res.end("x".repeat(100_000));
      if (path === "big-error") return res.writeHead(500).end("y".repeat(100_000));
      if (path === "endless") return endless(res);
      if (path === "trickle") return res.writeHead(200).write("accepted, then nothing more");
      if (path === "cut") {
        res.writeHead(200, { "content-length": "100" }).write("partial");
        return setTimeout(() => res.socket?.destroy(), 5);
      }
      if (path === "dated") return res.writeHead(503, { "retry-after": "Wed, 21 Oct 2015 07:28:00 GMT" }).end();
      if (path === "asctime") return res.writeHead(503, { "retry-after": "Wed Oct 21 07:28:00 2015" }).end();
      if (path === "not-a-date") return res.writeHead(429, { "retry-after": String(req.headers["x-value"]) }).end();
      if (path === "continue") {
        // Unrequested: the dispatcher sends no `Expect: 100-continue`.
        res.writeContinue();
        return res.end("after a 100");
      }
      if (path === "processing") {
        res.writeProcessing();
        return res.end("after a 102");
      }
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
      // Without DNS the name passes the syntax check; resolving it at registration refuses it already.
      const url = `http://evil.test:${server.port}/hooks`;
      expect(checkEndpointUrl(url, { allowHttp: true }).ok).toBe(true);
      expect(
        await checkResolvedEndpointUrl(url, resolver({ "evil.test": [address] }), { allowHttp: true }),
      ).toMatchObject({ ok: false, code: "forbidden_address" });
      const result = await dispatcher.dispatch(request(`http://evil.test:${server.port}/hooks`));
      expect(result).toMatchObject({ kind: "error", errorKind: "ssrf_blocked" });
      expect(server.received.length).toBe(before);
      dispatcher.close();
    });

    // Regression: the attempt's log line, which the endpoint's owner reads, named the address of the provider's DNS.
    it("logs the class of the forbidden address, never the address a name resolved to", async () => {
      const dispatcher = createDispatcher({
        urlPolicy: { allowHttp: true },
        resolve: resolver({ "db.internal": ["10.20.0.5"] }),
      });
      const result = await dispatcher.dispatch(request(`http://db.internal:${server.port}/hooks`));
      expect(result).toMatchObject({ kind: "error", errorKind: "ssrf_blocked" });
      const message = result.kind === "error" ? result.message : "";
      expect(message).toContain("private");
      expect(message).not.toContain("10.20.0.5");
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

    // Static refusals (the URL itself, no network work) are url_refused, which disables the endpoint; what a name
    // resolves to stays ssrf_blocked, retried (DNS answers change).
    it("a forbidden IP literal is refused without lookup, as url_refused", async () => {
      const dispatcher = createDispatcher({ urlPolicy: { allowHttp: true } });
      expect(await dispatcher.dispatch(request(server.url))).toMatchObject({ errorKind: "url_refused" });
      expect(await dispatcher.dispatch(request(`http://[::1]:${server.port}/`))).toMatchObject({
        errorKind: "url_refused",
      });
      dispatcher.close();
    });

    it("plain http is refused unless allowed, as url_refused", async () => {
      const dispatcher = createDispatcher({ urlPolicy: { allow: ["127.0.0.1"] } });
      expect(await dispatcher.dispatch(request(server.url))).toMatchObject({ errorKind: "url_refused" });
      dispatcher.close();
    });

    it.each(["localhost", "LOCALHOST.", "hooks.localhost"])(
      "%s is refused without lookup, as url_refused (RFC 6761 §6.3: always loopback), unless allow names it",
      async (name) => {
        const before = server.received.length;
        const looked: string[] = [];
        const resolve: HostResolver = (hostname) => {
          looked.push(hostname);
          return resolver({ [hostname]: ["127.0.0.1"] })(hostname);
        };
        const url = `http://${name}:${server.port}/hooks`;
        const refused = createDispatcher({ urlPolicy: { allowHttp: true, allow: ["127.0.0.0/8"] }, resolve });
        expect(await refused.dispatch(request(url))).toMatchObject({ kind: "error", errorKind: "url_refused" });
        refused.close();
        expect(looked).toEqual([]);
        expect(server.received.length).toBe(before);
        const allowed = createDispatcher({ urlPolicy: { allowHttp: true, allow: [name] }, resolve });
        expect(await allowed.dispatch(request(url))).toMatchObject({ kind: "response", status: 200 });
        allowed.close();
      },
    );

    it("the allow-list lets a test name reach loopback", async () => {
      const dispatcher = createDispatcher({ ...allowLocal, resolve: resolver({ "good.test": ["127.0.0.1"] }) });
      const result = await dispatcher.dispatch(request(`http://good.test:${server.port}/hooks`));
      expect(result).toMatchObject({ kind: "response", status: 200, body: "thanks" });
      dispatcher.close();
    });

    // Regression: an answer in node:dns `resolve4`'s shape threw inside the lookup's promise, an unhandled rejection
    // that ended the worker's process, and the attempt never settled.
    it.each([
      ["addresses as bare strings (dns.resolve4's shape)", "ssrf_blocked", async () => ["127.0.0.1"]],
      ["no list", "ssrf_blocked", async () => null],
      ["an entry without an address", "ssrf_blocked", async () => [{ family: 4 }]],
      [
        "a throw, not a rejection",
        "network",
        () => {
          throw new Error("resolver bug");
        },
      ],
      // Regression: a reason that is no Error reached net's lookup callback as no error at all (undefined, null) and
      // net read the missing addresses: an uncaught TypeError that ended the process.
      ["a rejection with no reason", "network", () => Promise.reject()],
      ["a rejection with null", "network", () => Promise.reject(null)],
      ["a thrown string", "network", async () => Promise.reject("resolver bug")],
    ])("a resolver answering %s fails the attempt (%s), and nothing is sent", async (_case, errorKind, resolve) => {
      const before = server.received.length;
      const dispatcher = createDispatcher({ ...allowLocal, timeoutMs: 10_000, resolve: resolve as never });
      const result = await dispatcher.dispatch(request(`http://broken.test:${server.port}/hooks`));
      expect(result).toMatchObject({ kind: "error", errorKind });
      expect(server.received.length).toBe(before);
      dispatcher.close();
    });

    it("an unknown name is a dns error", async () => {
      const dispatcher = createDispatcher({ ...allowLocal, resolve: resolver({}) });
      expect(await dispatcher.dispatch(request("http://nowhere.test/"))).toMatchObject({ errorKind: "dns" });
      dispatcher.close();
    });

    it("a name server that does not answer in time is a dns error (systemResolver's ETIMEOUT), not a time-out of the endpoint", async () => {
      const silent = createSystemResolver({ timeoutMs: 20, lookup: () => new Promise(() => {}) });
      const dispatcher = createDispatcher({ ...allowLocal, resolve: silent });
      expect(await dispatcher.dispatch(request("http://slow.test/"))).toMatchObject({
        kind: "error",
        errorKind: "dns",
      });
      dispatcher.close();
    });
  });

  describe("deny and ports at send time (a policy tightened after registration still holds)", () => {
    // The provider's own public address; the local server stands in for it where a request must not arrive.
    const PROVIDER = "93.184.216.34";
    const calls: string[] = [];
    const dns = (entries: Record<string, string[]>): HostResolver => {
      const inner = resolver(entries);
      return (hostname) => {
        calls.push(hostname);
        return inner(hostname);
      };
    };
    const deliver = async (options: Parameters<typeof createDispatcher>[0], url: string) => {
      const before = server.received.length;
      const dispatcher = createDispatcher(options);
      try {
        const result = await dispatcher.dispatch(request(url));
        return { result, sent: server.received.length - before };
      } finally {
        dispatcher.close();
      }
    };

    it("a name resolving to a denied address is refused at connect, even where allow holds the address", async () => {
      const urlPolicy = { allowHttp: true, allow: ["127.0.0.1"], deny: ["127.0.0.1"] };
      const { result, sent } = await deliver(
        { urlPolicy, resolve: dns({ "rebound.test": ["127.0.0.1"] }) },
        `http://rebound.test:${server.port}/hooks`,
      );
      expect(result).toMatchObject({ kind: "error", errorKind: "ssrf_blocked" });
      expect(result.kind === "error" ? result.message : "").toContain("denied");
      expect(result.kind === "error" ? result.message : "").not.toContain("127.0.0.1");
      expect(sent).toBe(0);
    });

    it("a name allow holds is still checked against deny at connect (it may point into a denied range later)", async () => {
      const urlPolicy = { allowHttp: true, allow: ["good.test"], deny: ["127.0.0.0/8"] };
      const { result, sent } = await deliver(
        { urlPolicy, resolve: dns({ "good.test": ["127.0.0.1"] }) },
        `http://good.test:${server.port}/hooks`,
      );
      expect(result).toMatchObject({ kind: "error", errorKind: "ssrf_blocked" });
      expect(sent).toBe(0);
      // The same name without deny reaches the server: the refusal above is deny's.
      const allowed = await deliver(
        { urlPolicy: { allowHttp: true, allow: ["good.test"] }, resolve: dns({ "good.test": ["127.0.0.1"] }) },
        `http://good.test:${server.port}/hooks`,
      );
      expect(allowed).toMatchObject({ result: { kind: "response", status: 200 }, sent: 1 });
    });

    it("a public address the provider denies is never connected to (DNS rebinding onto its own API)", async () => {
      const { result } = await deliver(
        {
          urlPolicy: { deny: [`${PROVIDER}/32`] },
          resolve: dns({ "alias.attacker.test": [PROVIDER] }),
          timeoutMs: 2_000,
        },
        "https://alias.attacker.test/hooks",
      );
      expect(result).toMatchObject({ kind: "error", errorKind: "ssrf_blocked" });
    });

    it("a denied host name or IP literal stored before the entry was added is refused without DNS (url_refused)", async () => {
      calls.length = 0;
      const urlPolicy = {
        allowHttp: true,
        allow: ["127.0.0.1", "api.provider.test"],
        deny: ["api.provider.test", "127.0.0.1"],
      };
      const resolve = dns({ "api.provider.test": ["127.0.0.1"] });
      for (const url of [
        `http://api.provider.test:${server.port}/admin`,
        `http://API.provider.test.:${server.port}/`,
        server.url,
      ]) {
        const { result, sent } = await deliver({ urlPolicy, resolve }, url);
        expect(result, url).toMatchObject({ kind: "error", errorKind: "url_refused" });
        expect(sent).toBe(0);
      }
      expect(calls).toEqual([]);
    });

    it("a port outside ports is refused before connecting (url_refused); a listed one is delivered", async () => {
      calls.length = 0;
      const urlPolicy = { allowHttp: true, allow: ["127.0.0.1"] };
      const refused = await deliver({ urlPolicy: { ...urlPolicy, ports: [443] }, resolve: dns({}) }, server.url);
      expect(refused).toMatchObject({ result: { kind: "error", errorKind: "url_refused" }, sent: 0 });
      const named = await deliver(
        { urlPolicy: { ...urlPolicy, ports: [443] }, resolve: dns({ "hooks.test": ["127.0.0.1"] }) },
        `http://hooks.test:${server.port}/`,
      );
      expect(named).toMatchObject({ result: { kind: "error", errorKind: "url_refused" }, sent: 0 });
      expect(calls).toEqual([]);
      const listed = await deliver({ urlPolicy: { ...urlPolicy, ports: [443, server.port] } }, server.url);
      expect(listed).toMatchObject({ result: { kind: "response", status: 200 }, sent: 1 });
    });

    // Regression: registration refuses these (invalid_url), but a URL stored with them (a row written by hand or
    // imported, a store filled before the check) was sent: its credentials silently dropped (RFC 9110 §4.2.4: userinfo
    // is deprecated in http(s) URIs, a sender must not generate it), or, on port 0 (RFC 6335 §6: reserved, nothing
    // can listen on it), failed to connect on every attempt of the schedule and then disabled the endpoint as failing.
    it.each([
      ["a user and password", (port: number) => `http://user:pass@127.0.0.1:${port}/hooks`],
      ["a user name only", (port: number) => `http://user@127.0.0.1:${port}/hooks`],
      ["a password only", (port: number) => `http://:pass@127.0.0.1:${port}/hooks`],
      ["a host name with credentials", (port: number) => `http://user:pass@hooks.test:${port}/hooks`],
      ["port 0", () => "http://127.0.0.1:0/hooks"],
      ["port 00 on a name", () => "http://hooks.test:00/hooks"],
    ])(
      "a stored URL with %s is refused before connecting (url_refused), as registration refuses it",
      async (_, url) => {
        calls.length = 0;
        const urlPolicy = { allowHttp: true, allow: ["127.0.0.1"] };
        const target = url(server.port);
        expect(checkEndpointUrl(target, urlPolicy)).toMatchObject({ ok: false, code: "invalid_url" });
        const refused = await deliver({ urlPolicy, resolve: dns({ "hooks.test": ["127.0.0.1"] }) }, target);
        expect(refused).toMatchObject({ result: { kind: "error", errorKind: "url_refused" }, sent: 0 });
        expect(calls).toEqual([]);
      },
    );
  });

  describe("outcomes", () => {
    const dispatcher = createDispatcher({
      ...allowLocal,
      // Long enough that a loaded machine still answers the other cases in time.
      timeoutMs: TIMEOUT_MS,
      maxResponseBytes: 1_000,
      logResponseBytes: 10,
    });
    afterAll(() => dispatcher.close());

    it("keeps connections alive across attempts", async () => {
      const before = server.connections();
      for (let i = 0; i < 20; i++) expect(await send(dispatcher, "ok")).toMatchObject({ status: 200 });
      // undici reuses a connection only one event-loop turn after its response ended (a guard against servers that
      // close despite keep-alive), so an attempt sent at once takes a second one; no more are opened.
      expect(server.connections() - before).toBeLessThanOrEqual(2);
    });

    it("does not follow redirects", async () => {
      expect(await send(dispatcher, "redirect")).toMatchObject({ kind: "response", status: 302 });
    });

    describe("interim (1xx) responses (RFC 9110 §15.2)", () => {
      it("a 102 Processing before the answer is read past: the final status decides", async () => {
        expect(await send(dispatcher, "processing")).toMatchObject({ kind: "response", status: 200 });
      });

      // Known limitation: undici closes the connection on a 100 it did not ask for, and the dispatcher sends no
      // `Expect`. The attempt fails, and its log says why, not a bare "bad response" (docs: Dispatching).
      it("an unrequested 100 Continue fails the attempt with a message naming it", async () => {
        expect(await send(dispatcher, "continue")).toMatchObject({
          kind: "error",
          errorKind: "connection_reset",
          message: UNREQUESTED_CONTINUE_MESSAGE,
        });
        expect(await send(dispatcher, "ok")).toMatchObject({ status: 200 });
      });
    });

    it("reads Retry-After", async () => {
      expect(await send(dispatcher, "busy")).toMatchObject({ status: 429, retryAfterMs: 7_000, body: "slow down" });
    });

    it("reads a Retry-After date against the injected clock", async () => {
      const at = Date.parse("Wed, 21 Oct 2015 07:28:00 GMT");
      const clocked = createDispatcher({ ...allowLocal, now: () => at - 90_000 });
      try {
        expect(await send(clocked, "dated")).toMatchObject({ status: 503, retryAfterMs: 90_000 });
      } finally {
        clocked.close();
      }
    });

    // Regression: Date.parse read an asctime-date as local time (hours off outside UTC), and took values that are
    // no HTTP-date ("1.5", "2016-01-01") as dates. RFC 9110 §5.6.7: all three forms are GMT; §10.2.3: else ignored.
    it("reads a Retry-After date in every HTTP-date form, as GMT, and ignores one that is no HTTP-date", async () => {
      const at = Date.parse("Wed, 21 Oct 2015 07:28:00 GMT");
      const clocked = createDispatcher({ ...allowLocal, now: () => at - 90_000 });
      const tz = process.env.TZ;
      process.env.TZ = "America/New_York";
      try {
        expect(await send(clocked, "asctime")).toMatchObject({ status: 503, retryAfterMs: 90_000 });
        for (const value of ["1.5", "2016-01-01", "-5", "Wed, 21 Oct 2015 07:28:00 PST"]) {
          const result = await clocked.dispatch({
            url: server.url,
            headers: { "x-case": "not-a-date", "x-value": value },
            body: "{}",
          });
          expect(result, value).toMatchObject({ status: 429, retryAfterMs: undefined });
        }
      } finally {
        if (tz === undefined) delete process.env.TZ;
        else process.env.TZ = tz;
        clocked.close();
      }
    });

    it("leaves the caller's headers alone (a frozen record works; content-length is sent)", async () => {
      const headers = Object.freeze({ "x-case": "ok", "content-type": "application/json" });
      const before = server.received.length;
      expect(await dispatcher.dispatch({ url: server.url, headers, body: "{}" })).toMatchObject({ status: 200 });
      expect(headers).toEqual({ "x-case": "ok", "content-type": "application/json" });
      expect(server.received[before]?.headers["content-length"]).toBe("2");
    });

    it("frames the request itself: Host from the URL, its own Content-Length, keep-alive", async () => {
      const before = server.received.length;
      const headers = { "x-case": "ok", host: "evil.example", "content-length": "999", "Webhook-Id": "msg_1" };
      expect(await dispatcher.dispatch({ url: server.url, headers, body: "{}" })).toMatchObject({ status: 200 });
      const seen = server.received[before]?.headers ?? {};
      expect(seen.host).toBe(new URL(server.url).host);
      expect(seen["content-length"]).toBe("2");
      expect(seen.connection).toBe("keep-alive");
      expect(seen["webhook-id"]).toBe("msg_1");
    });

    it("refuses a header field name that is not a token (RFC 9110 §5.1) without sending", async () => {
      const before = server.received.length;
      const result = await dispatcher.dispatch({ url: server.url, headers: { "bad name": "x" }, body: "{}" }).then(
        (value) => value,
        (error: unknown) => error,
      );
      expect(result).toBeInstanceOf(TypeError);
      expect(server.received.length).toBe(before);
    });

    describe("the status line decides the attempt; the body is only read for the log", () => {
      it("a 2xx with a body past the byte cap is delivered, its log cut to the first bytes", async () => {
        expect(await send(dispatcher, "big")).toEqual({
          kind: "response",
          status: 200,
          retryAfterMs: undefined,
          body: "xxxxxxxxxx",
          durationMs: expect.any(Number),
        });
      });

      it("a non-2xx past the byte cap is that status, not a transport failure", async () => {
        expect(await send(dispatcher, "big-error")).toMatchObject({
          kind: "response",
          status: 500,
          body: "yyyyyyyyyy",
        });
      });

      it("stops reading past the cap: an endless 2xx body ends the attempt (the socket is closed)", async () => {
        // A time-out far beyond the test's own: only the cap can end this exchange in time.
        const patient = createDispatcher({ ...allowLocal, timeoutMs: 600_000, maxResponseBytes: 50_000 });
        try {
          const before = closedEarly.length;
          expect(await send(patient, "endless")).toMatchObject({ kind: "response", status: 200 });
          await vi.waitFor(() => expect(closedEarly.length).toBe(before + 1));
          expect(closedEarly.at(-1)).toBe(true);
        } finally {
          patient.close();
        }
      });

      it("a 2xx whose body trickles past the time-out is delivered, not timed out", async () => {
        expect(await send(dispatcher, "trickle")).toMatchObject({
          kind: "response",
          status: 200,
          body: "accepted, ",
        });
      });

      it("a 2xx whose body is cut by a reset is delivered", async () => {
        expect(await send(dispatcher, "cut")).toMatchObject({ kind: "response", status: 200, body: "partial" });
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
      expect(b.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 10);
    });

    it("an abort ends a hanging attempt at once and closes its connection", async () => {
      const controller = new AbortController();
      const pending = dispatcher.dispatch(
        { url: server.url, headers: { "x-case": "hang" }, body: "{}" },
        { signal: controller.signal },
      );
      await vi.waitFor(() => expect(server.received.at(-1)?.headers["x-case"]).toBe("hang"));
      controller.abort();
      const result = await pending;
      // Ended by the abort, not by the time-out.
      expect(result).toMatchObject({ kind: "error", errorKind: "network", message: expect.stringMatching(/abort/i) });
      // The next attempt still gets its answer (a fresh connection).
      expect(await send(dispatcher, "ok")).toMatchObject({ status: 200 });
    });

    it("an attempt whose signal is already aborted sends nothing", async () => {
      const before = server.received.length;
      const result = await dispatcher.dispatch(request(server.url), { signal: AbortSignal.abort() });
      expect(result).toMatchObject({ kind: "error" });
      expect(server.received.length).toBe(before);
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
