import { BlockList, SocketAddress } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { clientIp } from "../../src/ratelimit/index";

const request = (headers: Record<string, string>, remoteAddress?: string) => ({ headers, remoteAddress });

/**
 * node:net's reading of an address (inet_ntop: RFC 5952 canonical text), as clientIp keys it with `ipv6Prefix: 128`:
 * the IPv4 inside an IPv4-mapped address, else the canonical IPv6.
 */
function canonical(ip: string): string {
  const text = new SocketAddress({ address: ip, family: "ipv6" }).address;
  return text.startsWith("::ffff:") && text.includes(".") ? text.slice(7) : text;
}

// inet_ntop writes ::/96 (deprecated IPv4-compatible) with a dotted tail; clientIp writes it in hex, as RFC 5952 §5
// recommends mixed notation only for mapped and translated addresses.
const notIPv4Compatible = (ip: string): boolean =>
  !/^::(\d|[0-9a-f]{1,4}(:|$))/i.test(canonical(ip)) || canonical(ip) === "::";

// SIIT's IPv4-translated (::ffff:0:0:0/96), NAT64's well-known prefix (64:ff9b::/96), Teredo (2001::/32) and 6to4
// (2002::/16) are keyed as the IPv4 address they hold; node:net writes the address in hex.
const notTranslated = (ip: string): boolean => !/^(::ffff:0:|64:ff9b::|2001:0:|2001::|2002:)/i.test(canonical(ip));

// Whatever a client may write to the left of what the proxies append: any text, and text made of the characters that
// steer a parser (quotes, escapes, separators), so that unbalanced quotes and odd backslash runs come up often.
const clientWritten = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.string({ unit: fc.constantFrom('"', "\\", ",", ";", "=", " ", "for", "[", "]", ":", "x", "1") }),
);

// What a trusted proxy appends: the address it saw, as RFC 7239 §4 and §6 write it (IPv6 quoted and bracketed).
const proxyNode = fc.oneof(
  fc.ipV4().map((ip) => ({ written: ip, expected: ip })),
  // clientIp unwraps an IPv4-mapped address (::ffff:192.0.2.1 is 192.0.2.1); with ipv6Prefix 128 it keys any other
  // IPv6 by its canonical text.
  fc
    .ipV6()
    .filter((ip) => notIPv4Compatible(ip) && notTranslated(ip))
    .map((ip) => ({ written: `"[${ip}]:443"`, expected: canonical(ip) })),
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
      ["bracketed IPv6 with a port", { "x-forwarded-for": "[2001:db8::1]:443" }, "10.0.0.1", 1, "2001:db8::/64"],
      ["bare IPv6", { "x-forwarded-for": "2001:db8::1" }, "10.0.0.1", 1, "2001:db8::/64"],
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
      ["§7.1 quoted IPv6 with port", 'for="[2001:db8:cafe::17]:4711"', 1, "2001:db8:cafe::/64"],
      ["case-insensitive parameter name", "For=198.51.100.17", 1, "198.51.100.17"],
      ["two elements, two proxies", "for=6.6.6.6, for=192.0.2.43", 2, "6.6.6.6"],
      ["two elements, one proxy", "for=6.6.6.6, for=192.0.2.43", 1, "192.0.2.43"],
      ["obfuscated identifier (§6.3)", "for=_hidden, for=192.0.2.43", 2, "_hidden"],
      ["element without for=: no address, not a shared key", "for=6.6.6.6, proto=https", 1, undefined],
      ["for=unknown (§6.2): no address", "for=6.6.6.6, for=unknown", 1, undefined],
      ['quoted "unknown", any case', 'for=6.6.6.6, for="UNKNOWN"', 1, undefined],
      ["unknown further left is not read", "for=unknown, for=192.0.2.43", 1, "192.0.2.43"],
      ["comma inside quotes", 'for="[2001:db8::1]";host="a,b", for=192.0.2.43', 2, "2001:db8::/64"],
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
          const options = { trustedProxies: nodes.length, header: "forwarded" as const, ipv6Prefix: 128 };
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

  // Regression: an IPv6 client holds a whole /64 (RFC 4291 §2.5.1, SLAAC), and keyed by its full address it got a
  // fresh allowance from each of its 2^64 addresses; and "::ffff:1.2.3.4" in hex, or one address spelled two ways,
  // gave two keys for one client.
  describe("keys: one per IPv4 address, one per IPv6 prefix (ipv6Prefix, /64 by default)", () => {
    const key = (address: string, ipv6Prefix?: number) =>
      clientIp(request({}, address), ipv6Prefix === undefined ? {} : { ipv6Prefix });

    it.each<[string, string, number | undefined, string]>([
      ["an IPv6 address: its /64", "2001:db8:1:2:aaaa:bbbb:cccc:dddd", undefined, "2001:db8:1:2::/64"],
      ["another address of that /64: the same key", "2001:DB8:1:2::1", undefined, "2001:db8:1:2::/64"],
      ["a /64 with no zero group", "2001:db8:ffff:ffff:1::", undefined, "2001:db8:ffff:ffff::/64"],
      ["the /48 (a site's whole delegation)", "2001:db8:1:2::1", 48, "2001:db8:1::/48"],
      ["a prefix that cuts a group: /60", "2001:db8:1:2f::1", 60, "2001:db8:1:20::/60"],
      ["/128: the address, in RFC 5952 form", "2001:0DB8:0000:0000:0001:0000:0000:0001", 128, "2001:db8::1:0:0:1"],
      ["/128, compressed spelling", "2001:db8::1:0:0:1", 128, "2001:db8::1:0:0:1"],
      ["/128, the longest zero run is compressed", "1:0:0:1:0:0:0:1", 128, "1:0:0:1::1"],
      ["/128, a single zero group is not", "1:2:3:4:5:6:0:8", 128, "1:2:3:4:5:6:0:8"],
      ["/128, a zone is dropped", "2001:db8::1%eth0", 128, "2001:db8::1"],
      ["IPv4: the address, whatever the prefix", "192.0.2.1", 64, "192.0.2.1"],
      ["IPv4-mapped, dotted", "::ffff:192.0.2.1", undefined, "192.0.2.1"],
      ["IPv4-mapped, upper case", "::FFFF:192.0.2.1", undefined, "192.0.2.1"],
      ["IPv4-mapped, in hex", "::ffff:c000:201", undefined, "192.0.2.1"],
      ["IPv4-mapped, expanded", "0:0:0:0:0:ffff:c000:0201", undefined, "192.0.2.1"],
      ["IPv4-mapped, bracketed with a port", "[::ffff:192.0.2.1]:8080", undefined, "192.0.2.1"],
      ["not an address (an obfuscated node): as it is", "_hidden", undefined, "_hidden"],
    ])("%s", (_case, address, ipv6Prefix, expected) => {
      expect(key(address, ipv6Prefix)).toBe(expected);
    });

    // Regression: every link-local peer (fe80::/10) shares fe80::/64, so all the clients on a link spent one allowance;
    // ::1 keyed as ::/64; and an IPv4 client behind a NAT64/SIIT translator (64:ff9b::/96) keyed as 64:ff9b::/64, one
    // allowance for the whole IPv4 Internet.
    describe("ranges where a /64 is not one host", () => {
      it.each<[string, string, number | undefined, string]>([
        ["link-local: the address and its zone", "fe80::1%eth0", undefined, "fe80::1%eth0"],
        ["link-local: another host on that link", "fe80::2%eth0", undefined, "fe80::2%eth0"],
        ["link-local: the same address on another link", "fe80::1%eth1", undefined, "fe80::1%eth1"],
        ["link-local without a zone", "FE80::A:B:C:D", undefined, "fe80::a:b:c:d"],
        ["link-local, all of fe80::/10", "febf:1::1", 48, "febf:1::1"],
        ["link-local, bracketed with a port", "[fe80::1%eth0]:8080", undefined, "fe80::1%eth0"],
        ["loopback", "::1", undefined, "::1"],
        ["loopback, expanded", "0:0:0:0:0:0:0:1", 48, "::1"],
        ["deprecated IPv4-compatible (::/96)", "::c000:201", undefined, "::c000:201"],
        ["NAT64 well-known prefix: the IPv4 it holds (RFC 6052)", "64:ff9b::192.0.2.1", undefined, "192.0.2.1"],
        ["NAT64 well-known prefix, in hex", "64:FF9B::C000:201", 128, "192.0.2.1"],
        ["NAT64 well-known prefix, expanded", "0064:ff9b:0000:0000:0000:0000:c000:0201", 48, "192.0.2.1"],
        ["SIIT IPv4-translated: the IPv4 it holds (RFC 2765 §2.1)", "::ffff:0:192.0.2.1", undefined, "192.0.2.1"],
        ["SIIT IPv4-translated, in hex", "::FFFF:0:C000:201", 128, "192.0.2.1"],
        ["SIIT IPv4-translated, expanded", "0:0:0:0:ffff:0000:c000:0201", 16, "192.0.2.1"],
        ["SIIT IPv4-translated, bracketed with a port", "[::ffff:0:192.0.2.1]:443", undefined, "192.0.2.1"],
        ["not IPv4-translated: ::ffff:1:0:0/96 keyed by its /64", "::ffff:1:c000:201", undefined, "::/64"],
        // RFC 4380 §4: server 192.0.2.45, flags 0x8000, port 40000 and client 198.51.100.7, both inverted.
        [
          "Teredo: the client's IPv4, inverted in the last 32 bits",
          "2001:0:c000:22d:8000:63bf:39cc:9bf8",
          undefined,
          "198.51.100.7",
        ],
        ["Teredo, at any ipv6Prefix", "2001::c000:22d:8000:63bf:39cc:9bf8", 128, "198.51.100.7"],
        [
          "NAT64 local-use prefix: the address (RFC 8215)",
          "64:ff9b:1:c0:0:2:100:0",
          undefined,
          "64:ff9b:1:c0:0:2:100:0",
        ],
        // RFC 3056 §2: 2002:V4ADDR::/48 is the whole site prefix of one IPv4 host (here 192.0.2.1).
        ["6to4: the IPv4 address it embeds", "2002:c000:201:1:2:3:4:5", undefined, "192.0.2.1"],
        ["6to4, another /64 of that /48", "2002:c000:201:ffff::1", undefined, "192.0.2.1"],
        ["6to4, upper case and expanded", "2002:C000:0201:0000:0000:0000:0000:0001", undefined, "192.0.2.1"],
        ["6to4, with a dotted tail", "2002:c000:201::192.0.2.1", undefined, "192.0.2.1"],
        ["6to4, bracketed with a port and a zone", "[2002:c000:201::1%eth0]:443", undefined, "192.0.2.1"],
        ["6to4, at any ipv6Prefix", "2002:c000:201::1", 128, "192.0.2.1"],
        ["6to4, even a prefix shorter than its /48", "2002:c000:201::1", 16, "192.0.2.1"],
        // RFC 5214 §6.1: ISATAP puts the IPv4 in the interface identifier, inside a /64 that is kept.
        ["ISATAP: its /64, as any address", "2001:db8:1:2:200:5efe:c000:201", undefined, "2001:db8:1:2::/64"],
        ["not link-local: fec0::/10 keyed by its /64", "fec0::1", undefined, "fec0::/64"],
        ["not loopback: ::1:0:0:1 keyed by its /64", "::1:0:0:1", undefined, "::/64"],
      ])("%s", (_case, address, ipv6Prefix, expected) => {
        expect(key(address, ipv6Prefix)).toBe(expected);
      });

      it("keeps link-local peers apart, and a NAT64 client with the same client over IPv4", () => {
        expect(key("fe80::1%eth0")).not.toBe(key("fe80::2%eth0"));
        expect(key("fe80::aaaa:1")).not.toBe(key("fe80::aaaa:2"));
        expect(key("64:ff9b::198.51.100.1")).not.toBe(key("64:ff9b::198.51.100.2"));
        expect(key("64:ff9b::198.51.100.1")).toBe(key("198.51.100.1"));
      });

      // Regression: an IPv4-translated address (::ffff:0:0:0/96, RFC 2765 §2.1) was keyed by its /64, ::/64, so every
      // IPv4 client behind a SIIT translator spent one allowance, and one could not be told from another.
      it("keeps SIIT clients apart, and a SIIT client with the same client over IPv4", () => {
        expect(key("::ffff:0:198.51.100.1")).not.toBe(key("::ffff:0:198.51.100.2"));
        expect(key("::ffff:0:198.51.100.1")).toBe(key("198.51.100.1"));
      });

      // Law: each IPv6 form that carries an IPv4 address, in any spelling, at any ipv6Prefix, is keyed as that address.
      it("keys any IPv4 address embedded in each form as the bare IPv4 address", () => {
        const hex = (word: number) => word.toString(16);
        const forms: Record<string, (v4: string, words: [number, number], rest: number[]) => string> = {
          "IPv4-mapped (RFC 4291 §2.5.5.2)": (v4) => `::ffff:${v4}`,
          "IPv4-mapped, in hex": (_, [high, low]) => `::ffff:${hex(high)}:${hex(low)}`,
          "IPv4-translated (RFC 2765 §2.1)": (v4) => `::ffff:0:${v4}`,
          "IPv4-translated, expanded": (_, [high, low]) => `0:0:0:0:ffff:0:${hex(high)}:${hex(low)}`,
          "NAT64 well-known prefix (RFC 6052 §2.1)": (v4) => `64:ff9b::${v4}`,
          "NAT64 well-known prefix, expanded": (_, [high, low]) => `64:ff9b:0:0:0:0:${hex(high)}:${hex(low)}`,
          "6to4 (RFC 3056 §2)": (_, [high, low], rest) => ["2002", hex(high), hex(low), ...rest.map(hex)].join(":"),
          "Teredo (RFC 4380 §4), inverted": (_, [high, low], rest) =>
            ["2001", "0", ...rest.slice(0, 4).map(hex), hex(high ^ 0xffff), hex(low ^ 0xffff)].join(":"),
        };
        fc.assert(
          fc.property(
            fc.ipV4(),
            fc.constantFrom(...Object.keys(forms)),
            fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 5, maxLength: 5 }),
            fc.integer({ min: 1, max: 128 }),
            fc.boolean(),
            (v4, form, rest, ipv6Prefix, upper) => {
              const [a, b, c, d] = v4.split(".").map(Number) as [number, number, number, number];
              const address = (forms[form] as (typeof forms)[string])(v4, [(a << 8) | b, (c << 8) | d], rest);
              const written = upper ? address.toUpperCase() : address;
              expect(key(written, ipv6Prefix)).toBe(v4);
              expect(key(`[${written}]:443`, ipv6Prefix)).toBe(v4);
              expect(key(written, ipv6Prefix)).toBe(key(v4, ipv6Prefix));
            },
          ),
          { numRuns: 2_000 },
        );
      });

      // Regression: a Teredo address's /64 is its relay server and flags (RFC 4380 §4), so every client of one Teredo
      // server shared one allowance.
      it("keeps two Teredo clients of one server apart, and a Teredo client with the same NAT over IPv4", () => {
        expect(key("2001:0:c000:22d:8000:63bf:39cc:9bf8")).not.toBe(key("2001:0:c000:22d:8000:63bf:39cc:9bf9"));
        expect(key("2001:0:c000:22d:8000:63bf:39cc:9bf8")).toBe(key("198.51.100.7"));
      });

      // Regression: a 6to4 address (2002::/16) was keyed by its /64, and 2002:V4ADDR::/48 is the site prefix of one
      // IPv4 host (RFC 3056 §2), so that host took a fresh allowance from each of its 65,536 /64s.
      it("keys every address of a 6to4 /48 as the IPv4 host it belongs to, at any ipv6Prefix", () => {
        const hex = (word: number) => word.toString(16);
        fc.assert(
          fc.property(
            fc.ipV4(),
            fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 5, maxLength: 5 }),
            fc.integer({ min: 1, max: 128 }),
            fc.boolean(),
            (v4, rest, ipv6Prefix, upper) => {
              const [a, b, c, d] = v4.split(".").map(Number) as [number, number, number, number];
              const address = ["2002", hex((a << 8) | b), hex((c << 8) | d), ...rest.map(hex)].join(":");
              const written = upper ? address.toUpperCase() : address;
              expect(key(written, ipv6Prefix)).toBe(v4);
              expect(key(canonical(address), ipv6Prefix)).toBe(v4);
              expect(key(written, ipv6Prefix)).toBe(key(v4, ipv6Prefix));
            },
          ),
          { numRuns: 1_000 },
        );
      });
    });

    it("keeps IPv4 addresses apart, and IPv6 prefixes", () => {
      expect(key("192.0.2.1")).not.toBe(key("192.0.2.2"));
      expect(key("2001:db8:1:2::1")).not.toBe(key("2001:db8:1:3::1"));
      expect(key("2001:db8:1:2::1", 128)).not.toBe(key("2001:db8:1:2::2", 128));
    });

    it("agrees with node:net: two addresses share a key exactly when BlockList puts them in one subnet", () => {
      const groups = fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 });
      const full = (words: number[]) => words.map((word) => word.toString(16).padStart(4, "0")).join(":");
      fc.assert(
        fc.property(
          groups,
          groups,
          fc.integer({ min: 0, max: 8 }),
          fc.integer({ min: 1, max: 128 }),
          (x, y, shared, prefix) => {
            // b shares a's first groups, so that shared subnets come up; a is keyed in its canonical spelling.
            const a = full(x);
            const b = full([...x.slice(0, shared), ...y.slice(shared)]);
            // IPv4-mapped, NAT64, Teredo, 6to4, link-local and ::/96 addresses are keyed otherwise (above).
            fc.pre(
              ![a, b].some(
                (ip) =>
                  canonical(ip).includes(".") || /^(64:ff9b:|2001:0:|2001::|2002:|fe[89ab]|::)/.test(canonical(ip)),
              ),
            );
            const list = new BlockList();
            list.addSubnet(a, prefix, "ipv6");
            expect(key(canonical(a), prefix) === key(b, prefix)).toBe(list.check(b, "ipv6"));
          },
        ),
        { numRuns: 2_000 },
      );
    });

    it("agrees with node:net on the canonical text of any IPv6 address (ipv6Prefix 128)", () => {
      fc.assert(
        fc.property(
          fc.ipV6().filter((ip) => notIPv4Compatible(ip) && notTranslated(ip)),
          (ip) => {
            expect(key(ip, 128)).toBe(canonical(ip));
            expect(key(ip.toUpperCase(), 128)).toBe(canonical(ip));
          },
        ),
        { numRuns: 1_000 },
      );
    });

    it.each([0, 129, 64.5, Number.NaN, Number.POSITIVE_INFINITY, -64, "64"])(
      "throws TypeError on ipv6Prefix %s",
      (ipv6Prefix) => {
        expect(() => clientIp(request({}, "2001:db8::1"), { ipv6Prefix: ipv6Prefix as number })).toThrow(
          /clientIp: ipv6Prefix must be an integer from 1 to 128/,
        );
      },
    );
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
