import { describe, expect, it } from "vitest";
import { clientIp } from "../../src/ratelimit/index";

const request = (headers: Record<string, string>, remoteAddress?: string) => ({ headers, remoteAddress });

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
});
