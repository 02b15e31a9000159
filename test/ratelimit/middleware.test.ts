import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { adapt } from "../../src/fetch/index";
import { type Handler, HttpProblem, json, parseList } from "../../src/http/index";
import { createServer } from "../../src/node/index";
import { clientIp, createRateLimiter, QUOTA_EXCEEDED_TYPE, rateLimit } from "../../src/ratelimit/index";
import { serveResetRequests } from "../support/reset-after-request";

function fakeClock(start = 1_700_000_000_000) {
  let now = start;
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

const hello: Handler = () => json(200, { hello: "world" });

describe("rateLimit (Handler wrapper)", () => {
  it.each([
    ["no options", undefined, /options\.limiter/],
    ["no limiter", {}, /options\.limiter/],
    ["a limiter that is not one", { limiter: { policies: [] } }, /options\.limiter/],
    [
      "a key that is not a function",
      { limiter: createRateLimiter({ policies: [{ name: "m", quota: 1, window: 1 }] }), key: "ip" },
      /options\.key/,
    ],
  ])("refuses %s at construction, naming the option (programmer error)", (_what, options, message) => {
    expect(() => rateLimit(options as never)).toThrow(message);
  });

  it.each([
    ["no policies", {}],
    ["an empty list", { policies: [] }],
    ["a store without check", { policies: [{ name: "m", quota: 1, window: 1 }], store: {} }],
  ])("createRateLimiter refuses %s, naming the option", (_what, options) => {
    expect(() => createRateLimiter(options as never)).toThrow(/createRateLimiter: options\./);
  });

  it("adds RateLimit-Policy and RateLimit to every admitted response", async () => {
    const clock = fakeClock();
    const limiter = createRateLimiter({ policies: [{ name: "default", quota: 2, window: 10 }] });
    const app = adapt(rateLimit({ limiter, key: () => "k", now: clock.now })(hello));
    const response = await app(new Request("http://localhost/items"));
    expect(response.status).toBe(200);
    expect(response.headers.get("ratelimit-policy")).toBe('"default";q=2;w=10');
    expect(response.headers.get("ratelimit")).toBe('"default";r=1;t=5');
    expect(response.headers.has("retry-after")).toBe(false);
    expect(await response.json()).toEqual({ hello: "world" });
  });

  it("answers 429 quota-exceeded with Retry-After without calling the handler, then admits after Retry-After", async () => {
    const clock = fakeClock();
    let calls = 0;
    const limiter = createRateLimiter({
      policies: [
        { name: "second", quota: 1, window: 1 },
        { name: "day", quota: 100, window: 86_400 },
      ],
    });
    const app = adapt(
      rateLimit({ limiter, key: () => "k", now: clock.now })(() => {
        calls++;
        return json(200, {});
      }),
    );
    expect((await app(new Request("http://localhost/"))).status).toBe(200);
    clock.advance(300);
    const refused = await app(new Request("http://localhost/"));
    expect(refused.status).toBe(429);
    expect(calls).toBe(1);
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(parseList(refused.headers.get("ratelimit") ?? "")).toHaveLength(2);
    const body = await refused.json();
    expect(body).toMatchObject({ type: QUOTA_EXCEEDED_TYPE, status: 429, code: "quota_exceeded" });
    expect(body["violated-policies"]).toEqual(["second"]);
    clock.advance(Number(refused.headers.get("retry-after")) * 1000);
    expect((await app(new Request("http://localhost/"))).status).toBe(200);
  });

  it("adds the fields to problems the handler throws", async () => {
    const limiter = createRateLimiter({ policies: [{ name: "p", quota: 5, window: 1 }] });
    const app = adapt(
      rateLimit({ limiter, key: () => "k", now: () => 0 })(() => {
        throw new HttpProblem({ status: 404, code: "not_found" });
      }),
    );
    const response = await app(new Request("http://localhost/"));
    expect(response.status).toBe(404);
    expect(response.headers.get("ratelimit")).toBe('"p";r=4;t=1');
  });

  it("leaves a request unlimited, without fields, when the key is undefined", async () => {
    const limiter = createRateLimiter({ policies: [{ name: "p", quota: 1, window: 60 }] });
    const app = adapt(rateLimit({ limiter, key: (request) => request.headers["x-api-key"] })(hello));
    for (let i = 0; i < 3; i++) {
      const response = await app(new Request("http://localhost/"));
      expect(response.status).toBe(200);
      expect(response.headers.has("ratelimit")).toBe(false);
    }
  });

  it("keys partitions apart", async () => {
    const limiter = createRateLimiter({ policies: [{ name: "p", quota: 1, window: 60 }] });
    const app = adapt(rateLimit({ limiter, key: (request) => request.headers["x-api-key"], now: () => 0 })(hello));
    const as = (key: string) => new Request("http://localhost/", { headers: { "x-api-key": key } });
    expect((await app(as("a"))).status).toBe(200);
    expect((await app(as("b"))).status).toBe(200);
    expect((await app(as("a"))).status).toBe(429);
  });

  it("limits a key with a lone surrogate under its well-formed form instead of answering 500", async () => {
    const limiter = createRateLimiter({ policies: [{ name: "p", quota: 1, window: 60 }] });
    // A key from a body field or a token claim can hold one; the stores refuse such a key with a TypeError.
    const app = adapt(rateLimit({ limiter, key: () => "k\ud800", now: () => 0 })(hello));
    expect((await app(new Request("http://localhost/"))).status).toBe(200);
    expect((await app(new Request("http://localhost/"))).status).toBe(429);
  });

  it("lists the items of stacked limiters in one field (RFC 9651 §3.1)", async () => {
    const perIp = createRateLimiter({ policies: [{ name: "ip", quota: 100, window: 60 }], prefix: "ip:" });
    const perUser = createRateLimiter({ policies: [{ name: "user", quota: 10, window: 60 }], prefix: "user:" });
    const app = adapt(
      rateLimit({ limiter: perIp, key: () => "1.2.3.4", now: () => 0 })(
        rateLimit({ limiter: perUser, key: () => "u1", now: () => 0 })(hello),
      ),
    );
    const response = await app(new Request("http://localhost/"));
    expect(response.headers.get("ratelimit")).toBe('"user";r=9;t=6, "ip";r=99;t=1');
    expect(response.headers.get("ratelimit-policy")).toBe('"user";q=10;w=60, "ip";q=100;w=60');
  });

  it("works on node:http, keyed by the peer address by default", async () => {
    const limiter = createRateLimiter({ policies: [{ name: "p", quota: 1, window: 60 }] });
    const server = createServer(rateLimit({ limiter })(hello));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const first = await fetch(url);
      expect(first.status).toBe(200);
      expect(first.headers.get("ratelimit")).toBe('"p";r=0;t=60');
      await first.arrayBuffer();
      const second = await fetch(url);
      expect(second.status).toBe(429);
      expect(Number(second.headers.get("retry-after"))).toBeGreaterThan(0);
      await second.arrayBuffer();
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  describe("the default key, when the peer address is unknown", () => {
    it("limits such requests together (fails closed) instead of leaving them unlimited", async () => {
      let calls = 0;
      const limiter = createRateLimiter({ policies: [{ name: "p", quota: 1, window: 60 }] });
      const app = adapt(
        rateLimit({ limiter, now: () => 0 })(() => {
          calls++;
          return json(200, {});
        }),
      );
      // A Fetch runtime knows no peer address.
      expect((await app(new Request("http://localhost/"))).status).toBe(200);
      const second = await app(new Request("http://localhost/"));
      expect(second.status).toBe(429);
      expect(second.headers.get("ratelimit")).toBe('"p";r=0;t=60');
      expect(calls).toBe(1);
    });

    it("node:http: a client that resets its connection after sending the request is still limited", async () => {
      // Once the kernel has seen the RST, the socket no longer reports its peer: such requests went unlimited.
      let calls = 0;
      const limiter = createRateLimiter({ policies: [{ name: "p", quota: 1, window: 3_600 }] });
      await serveResetRequests(
        rateLimit({ limiter })(() => {
          calls++;
          return json(200, {});
        }),
        20,
      );
      // One admission per bucket: the peer's, when a request was read before the RST, and the unidentified one.
      expect(calls).toBeLessThanOrEqual(2);
    });
  });

  // Regression: the default key was the peer's full address, so an IPv6 client escaped the limit by moving to another
  // address of its /64 (2^64 of them).
  it("by default keys an IPv6 peer by its /64 and an IPv4-mapped peer as IPv4", async () => {
    const limiter = createRateLimiter({ policies: [{ name: "p", quota: 1, window: 60 }] });
    const handler = rateLimit({ limiter, now: () => 0 })(hello);
    const from = async (remoteAddress: string) =>
      (
        await handler({
          method: "GET",
          path: "/",
          search: "",
          query: {},
          headers: {},
          body: new Uint8Array(),
          remoteAddress,
        })
      ).status;
    expect(await from("2001:db8:1:2::1")).toBe(200);
    expect(await from("2001:db8:1:2:ffff:ffff:ffff:fffe")).toBe(429);
    expect(await from("2001:db8:1:3::1")).toBe(200);
    expect(await from("192.0.2.1")).toBe(200);
    expect(await from("::ffff:c000:201")).toBe(429);
    expect(await from("192.0.2.2")).toBe(200);
  });

  it("uses the trusted proxy's entry when the key says so", async () => {
    const limiter = createRateLimiter({ policies: [{ name: "p", quota: 1, window: 60 }] });
    const app = adapt(
      rateLimit({ limiter, key: (request) => clientIp(request, { trustedProxies: 1 }) ?? "unknown", now: () => 0 })(
        hello,
      ),
    );
    const from = (xff: string) => new Request("http://localhost/", { headers: { "x-forwarded-for": xff } });
    expect((await app(from("203.0.113.1"))).status).toBe(200);
    expect((await app(from("6.6.6.6, 203.0.113.1"))).status).toBe(429); // a spoofed left entry changes nothing
    expect((await app(from("203.0.113.2"))).status).toBe(200);
  });
});
