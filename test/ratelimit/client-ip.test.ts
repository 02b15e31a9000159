import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { clientIp } from "../../src/ratelimit/index";

const request = (headers: Record<string, string>, remoteAddress?: string) => ({ headers, remoteAddress });

// Whatever a client may write to the left of what the proxies append: any text, and text made of the characters that
// steer a parser (quotes, escapes, separators), so that unbalanced quotes and odd backslash runs come up often.
const clientWritten = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.string({ unit: fc.constantFrom('"', "\\", ",", ";", "=", " ", "for", "[", "]", ":", "x", "1") }),
);

// What a trusted proxy appends: the address it saw, as RFC 7239 §4 and §6 write it (IPv6 quoted and bracketed).
const proxyNode = fc.oneof(
  fc.ipV4().map((ip) => ({ written: ip, expected: ip })),
  // clientIp unwraps an IPv4-mapped address (::ffff:192.0.2.1 is 192.0.2.1).
  fc.ipV6().map((ip) => ({ written: `"[${ip}]:443"`, expected: ip.replace(/^::ffff:(?=.*\.)/i, "") })),
  fc.constantFrom("_hidden", "_SEVKISEK").map((id) => ({ written: id, expected: id })),
);

describe("clientIp", () => {
  describe("X-Forwarded-For", () => {
    it.each<[string, Record<string, string>, string | undefined, number, string | undefined]>([
      [
        "no proxy trusted: the peer, whatever the header says",
        { "x-forwarded-for": "6.6.6.6" },
        "10.0.0.1",
        0,
        "10.0.0.1",
      ],
      ["one proxy: the entry it appended", { "x-forwarded-for": "6.6.6.6, 203.0.113.7" }, "10.0.0.1", 1, "203.0.113.7"],
      [
        "two proxies: the second entry from the right",
        { "x-forwarded-for": "6.6.6.6, 203.0.113.7, 10.0.0.2" },
        "10.0.0.1",
        2,
        "203.0.113.7",
      ],
      ["fewer entries than proxies: the leftmost", { "x-forwarded-for": "203.0.113.7" }, "10.0.0.1", 3, "203.0.113.7"],
      ["no header although a proxy is trusted: the peer", {}, "10.0.0.1", 1, "10.0.0.1"],
      ["IPv4-mapped IPv6 peer", {}, "::ffff:192.0.2.1", 0, "192.0.2.1"],
      ["IPv4 with a port", { "x-forwarded-for": "203.0.113.7:5555" }, "10.0.0.1", 1, "203.0.113.7"],
      ["bracketed IPv6 with a port", { "x-forwarded-for": "[2001:db8::1]:443" }, "10.0.0.1", 1, "2001:db8::1"],
      ["bare IPv6", { "x-forwarded-for": "2001:db8::1" }, "10.0.0.1", 1, "2001:db8::1"],
      [
        "unknown peer (Fetch runtimes), one proxy",
        { "x-forwarded-for": "6.6.6.6, 203.0.113.7" },
        undefined,
        1,
        "203.0.113.7",
      ],
      ["unknown peer, nothing trusted", { "x-forwarded-for": "203.0.113.7" }, undefined, 0, undefined],
      [
        'the trusted entry is "unknown": no address',
        { "x-forwarded-for": "6.6.6.6, unknown" },
        "10.0.0.1",
        1,
        undefined,
      ],
      ["the trusted entry is empty: no address", { "x-forwarded-for": "6.6.6.6, " }, "10.0.0.1", 1, undefined],
    ])("%s", (_case, headers, peer, trustedProxies, expected) => {
      expect(clientIp(request(headers, peer), { trustedProxies })).toBe(expected);
    });
  });

  describe("Forwarded (RFC 7239)", () => {
    it.each<[string, string, number, string | undefined]>([
      ["§4 example, one proxy", "for=192.0.2.60;proto=http;by=203.0.113.43", 1, "192.0.2.60"],
      ["§7.1 quoted IPv6 with port", 'for="[2001:db8:cafe::17]:4711"', 1, "2001:db8:cafe::17"],
      ["case-insensitive parameter name", "For=198.51.100.17", 1, "198.51.100.17"],
      ["two elements, two proxies", "for=6.6.6.6, for=192.0.2.43", 2, "6.6.6.6"],
      ["two elements, one proxy", "for=6.6.6.6, for=192.0.2.43", 1, "192.0.2.43"],
      ["obfuscated identifier (§6.3)", "for=_hidden, for=192.0.2.43", 2, "_hidden"],
      ["element without for=: no address, not a shared key", "for=6.6.6.6, proto=https", 1, undefined],
      ["for=unknown (§6.2): no address", "for=6.6.6.6, for=unknown", 1, undefined],
      ['quoted "unknown", any case', 'for=6.6.6.6, for="UNKNOWN"', 1, undefined],
      ["unknown further left is not read", "for=unknown, for=192.0.2.43", 1, "192.0.2.43"],
      ["comma inside quotes", 'for="[2001:db8::1]";host="a,b", for=192.0.2.43', 2, "2001:db8::1"],
    ])("%s", (_case, field, trustedProxies, expected) => {
      expect(clientIp(request({ forwarded: field }, "10.0.0.1"), { trustedProxies, header: "forwarded" })).toBe(
        expected,
      );
    });
  });

  describe("nothing the client writes reaches the entries the trusted proxies appended", () => {
    // Regression: `Forwarded: for="x1` opened a quoted-string that the left-to-right split let run over the
    // proxy's `, for=203.0.113.7`, so the client chose its own key (a fresh one per request: no limit at all).
    it("an unclosed quote in the client's Forwarded does not swallow the proxy's element", () => {
      for (const sent of ['for="x1', 'for="\\\\"', 'proto="', 'for="a\\"b', '"']) {
        const forwarded = `${sent}, for=203.0.113.7`;
        expect(clientIp(request({ forwarded }, "10.0.0.1"), { trustedProxies: 1, header: "forwarded" })).toBe(
          "203.0.113.7",
        );
      }
    });

    it("Forwarded: any client-written prefix, then the proxies' elements: the first trusted proxy's address", () => {
      fc.assert(
        fc.property(clientWritten, fc.array(proxyNode, { minLength: 1, maxLength: 3 }), (sent, nodes) => {
          // RFC 7239 §4: each proxy appends one element; RFC 9110 §5.3: list members are joined with ", ".
          const appended = nodes.map((node, i) =>
            i % 2 === 0 ? `for=${node.written}` : `for=${node.written};proto=https`,
          );
          const forwarded = [sent, ...appended].join(", ");
          const options = { trustedProxies: nodes.length, header: "forwarded" as const };
          expect(clientIp(request({ forwarded }, "10.0.0.1"), options)).toBe(nodes[0]?.expected);
        }),
        { numRuns: 500 },
      );
    });

    it("X-Forwarded-For: any client-written prefix, then the proxies' entries: the first trusted proxy's address", () => {
      fc.assert(
        fc.property(clientWritten, fc.array(fc.ipV4(), { minLength: 1, maxLength: 3 }), (sent, ips) => {
          const field = [sent, ...ips].join(", ");
          const options = { trustedProxies: ips.length };
          expect(clientIp(request({ "x-forwarded-for": field }, "10.0.0.1"), options)).toBe(ips[0]);
        }),
        { numRuns: 500 },
      );
    });
  });

  // Regression: a Forwarded element without for= used to give the key "unknown", one bucket for every such client.
  it("lets the caller choose what unattributable requests share", () => {
    const unattributable = request({ forwarded: "proto=https" }, "10.0.0.1");
    const options = { trustedProxies: 1, header: "forwarded" as const };
    expect(clientIp(unattributable, options)).toBeUndefined();
    expect(clientIp(unattributable, options) ?? "unidentified").toBe("unidentified");
  });

  it("throws TypeError on a bad proxy count", () => {
    expect(() => clientIp(request({}), { trustedProxies: -1 })).toThrow(TypeError);
  });

  // Regression: any other header was read as X-Forwarded-For under its own name, found absent (names are lower-case),
  // and the peer returned: behind a proxy every client got the proxy's address, one bucket for all.
  it.each(["X-Forwarded-For", "Forwarded", "x-real-ip", ""])("throws TypeError on header %j, naming it", (header) => {
    const behindProxy = request({ "x-forwarded-for": "203.0.113.1", forwarded: "for=203.0.113.1" }, "10.0.0.1");
    expect(() => clientIp(behindProxy, { trustedProxies: 1, header: header as never })).toThrow(
      /clientIp: header must be "x-forwarded-for" or "forwarded"/,
    );
  });
});
